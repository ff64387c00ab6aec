// The data directory's lock (mongod.lock): a dead owner (killed, a zombie nobody reaped yet, a pid reused since)
// never blocks a start, and two live servers never share a directory.
//
// Database processes run under a parent that does not reap them until told to (`sh -c 'setsid ... & read x;
// wait'`): a server killed with SIGKILL stays a zombie while the next one starts, as under a supervisor that
// restarts at once or a container whose PID 1 reaps late. Each process loads the server ahead and starts it on
// SIGUSR1 (dbpath-lock-server.ts), so a restart follows the kill by milliseconds; it runs bundled into one file
// (esbuild, which tsx runs on), which a process loads in a fraction of the time tsx takes to compile the sources.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { build } from "esbuild";
import { MongoClient } from "mongodb";
import { procStat } from "../../src/embedded-mongo/durable/dbpath-lock.ts";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { compiledEntry } from "../support/processes.ts";

const SERVER = new URL("./dbpath-lock-server.ts", import.meta.url).pathname;
let bundled: string;
const CLI = compiledEntry("src/embedded-mongo/cli.ts");

const bootId = () => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

/** A database process in its own process group under a parent that reaps it only when `reap()` is called. */
interface Unreaped {
  pid: number;
  /** The next line it wrote (standard output or error). */
  nextLine(): Promise<string>;
  /** SIGKILL to its process group; resolves once it is a zombie. */
  kill(): Promise<void>;
  /** Lets its parent reap it (killing it first if it still runs) and waits for the parent to exit. */
  reap(): Promise<void>;
}

const running = new Set<Unreaped>();

async function spawnUnreaped(args: string[]): Promise<Unreaped> {
  const wrapper = spawn("sh", ["-c", 'setsid "$@" & echo "pid $!"; read x; wait', "sh", process.execPath, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => wrapper.once("exit", () => resolve()));
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  for (const stream of [wrapper.stdout!, wrapper.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      wake?.();
    });
  }
  const nextLine = async (): Promise<string> => {
    while (lines.length === 0) {
      const more = new Promise<void>((resolve) => (wake = resolve));
      if (await Promise.race([more.then(() => false), exited.then(() => true)])) throw new Error("the process ended without a word");
    }
    return lines.shift()!;
  };
  const first = await nextLine();
  const pid = Number(/^pid (\d+)$/.exec(first)?.[1]);
  if (!pid) throw new Error(`unexpected first line ${first}`);
  const proc: Unreaped = {
    pid,
    nextLine,
    async kill() {
      process.kill(-pid, "SIGKILL");
      await until(`process ${pid} to be a zombie`, () => procStat(pid)?.state === "Z");
    },
    async reap() {
      const state = procStat(pid)?.state;
      if (state !== undefined && state !== "Z") process.kill(-pid, "SIGKILL");
      wrapper.stdin!.end();
      await exited;
      running.delete(proc);
    },
  };
  running.add(proc);
  return proc;
}

/** A database process that has loaded the server and starts it on `dbPath` when `start()` is called. */
async function load(dbPath: string): Promise<Unreaped & { start(): Promise<{ uri?: string; error?: string }> }> {
  const proc = await spawnUnreaped([bundled, dbPath]);
  const ready = await proc.nextLine();
  if (ready !== "ready") throw new Error(`unexpected line ${ready}`);
  return {
    ...proc,
    async start() {
      process.kill(proc.pid, "SIGUSR1");
      const line = await proc.nextLine();
      return line.startsWith("error ") ? { error: line.slice(6) } : { uri: line };
    },
  };
}

/** The CLI (`npm run mongo:embedded`) on `dbPath`: its URI, or the error it exits with. */
async function startCli(dbPath: string): Promise<Unreaped & { uri?: string; error?: string }> {
  const proc = await spawnUnreaped([CLI, "--port", "0", "--dbpath", dbPath]);
  const line = await proc.nextLine();
  return { ...proc, ...(line.startsWith("mongodb://") ? { uri: line } : { error: line }) };
}

function lockOwner(dbPath: string): { pid: number; start?: string; boot?: string } {
  const [pid, ...rest] = readFileSync(path.join(dbPath, "mongod.lock"), "utf8").trim().split("\n");
  const fields = Object.fromEntries(rest.map((line) => line.split(" ")));
  return { pid: Number(pid), start: fields.start, boot: fields.boot };
}

describe("embedded-mongo: the dbPath lock (mongod.lock)", function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    bundled = path.join(mkdtempSync(path.join(tmpdir(), "embedded-mongo-lock-server-")), "server.mjs");
    await build({
      entryPoints: [SERVER],
      outfile: bundled,
      bundle: true,
      platform: "node",
      format: "esm",
      // CommonJS dependencies call require: give the module one.
      banner: { js: 'import { createRequire as bundleRequire } from "node:module"; const require = bundleRequire(import.meta.url);' },
      logLevel: "silent",
    });
  });
  after(() => rmSync(path.dirname(bundled), { recursive: true, force: true }));

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "embedded-mongo-lock-"));
  });
  afterEach(async () => {
    await Promise.all([...running].map((proc) => proc.reap()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("SIGKILL of the process group and an immediate restart on the same dbpath, 30 times: each start takes the lock, no acknowledged write is lost", async () => {
    // 30 rounds (50 until the suite neared its five minutes): each is a fresh process's start, about 0.35 s of CPU.
    const rounds = 30;
    // Processes load ahead (a few at a time), so each restart follows its predecessor's death at once.
    const ahead: Promise<Awaited<ReturnType<typeof load>>>[] = [];
    const refill = () => {
      while (ahead.length < 3) ahead.push(load(dir));
    };
    refill();
    const acknowledged: number[] = [];
    const restartMs: number[] = [];
    const began = Date.now();
    let previous: Awaited<ReturnType<typeof load>> | undefined;
    for (let round = 0; round < rounds; round++) {
      const next = await ahead.shift()!;
      refill();
      const startedAt = performance.now();
      const { uri, error } = await next.start();
      restartMs.push(performance.now() - startedAt);
      expect(error, `round ${round}`).to.equal(undefined);
      if (previous) {
        expect(procStat(previous.pid)?.state, "the killed owner is still a zombie").to.equal("Z");
        void previous.reap();
      }
      expect(lockOwner(dir)).to.include({ pid: next.pid, start: procStat(next.pid)!.start });
      const client = new MongoClient(uri!, { serverSelectionTimeoutMS: 5000 });
      try {
        const coll = client.db("lock").collection<{ _id: number; round: number }>("writes");
        const ids = (await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id).sort((a, b) => a - b);
        expect(ids, `acknowledged writes after restart ${round}`).to.deep.equal(acknowledged);
        const batch = [0, 1, 2].map((i) => round * 3 + i);
        await Promise.all(batch.map((id) => coll.insertOne({ _id: id, round })));
        acknowledged.push(...batch);
      } finally {
        await client.close();
      }
      await next.kill();
      previous = next;
    }
    const sorted = [...restartMs].sort((a, b) => a - b);
    console.log(
      `      ${rounds} rounds in ${Date.now() - began} ms; start after a kill: median ${sorted[rounds >> 1]!.toFixed(0)} ms, max ${sorted[rounds - 1]!.toFixed(0)} ms`,
    );
    await Promise.all(ahead.map(async (loading) => (await loading).reap()));
  });

  it("the CLI starts at once on a directory whose owner was killed and is still a zombie", async () => {
    const first = await load(dir);
    expect((await first.start()).error).to.equal(undefined);
    await first.kill();
    expect(lockOwner(dir).pid).to.equal(first.pid);
    const cli = await startCli(dir);
    expect(cli.error).to.equal(undefined);
    expect(procStat(first.pid)?.state).to.equal("Z");
    expect(lockOwner(dir).pid).to.equal(cli.pid);
  });

  it("refuses a second live server with DBPathInUse naming the owner's pid", async () => {
    const owner = await load(dir);
    expect((await owner.start()).error).to.equal(undefined);
    const cli = await startCli(dir);
    expect(cli.error).to.match(
      /^cannot start: DBPathInUse: Unable to lock the lock file: .*mongod\.lock\. Another server \(pid (\d+)\) is already running on /,
    );
    expect(cli.error).to.contain(`(pid ${owner.pid})`);
    expect(lockOwner(dir).pid).to.equal(owner.pid);
  });

  /** Starts `contenders` together; exactly one must run, the others refused with DBPathInUse naming it. */
  async function race(contenders: Awaited<ReturnType<typeof load>>[], dbPath: string): Promise<void> {
    const outcomes = await Promise.all(contenders.map((c) => c.start()));
    const winners = contenders.filter((_c, i) => outcomes[i]!.uri);
    expect(winners, JSON.stringify(outcomes)).to.have.length(1);
    for (const { error } of outcomes.filter((o) => o.error)) {
      expect(error).to.match(new RegExp(`^DBPathInUse: .*Another server \\(pid ${winners[0]!.pid}\\) is already running`));
    }
    expect(lockOwner(dbPath).pid).to.equal(winners[0]!.pid);
    expect(readdirSync(dbPath).filter((f) => f.startsWith("mongod.lock"))).to.deep.equal(["mongod.lock"]);
  }

  it("three servers starting at once on a fresh directory: exactly one runs", async () => {
    for (let attempt = 0; attempt < 4; attempt++) {
      const fresh = path.join(dir, `fresh-${attempt}`);
      const contenders = await Promise.all([load(fresh), load(fresh), load(fresh)]);
      await race(contenders, fresh);
      await Promise.all(contenders.map((c) => c.reap()));
    }
  });

  it("three restarts at once after the owner was killed: exactly one takes the lock over", async () => {
    for (let attempt = 0; attempt < 4; attempt++) {
      const [owner, ...contenders] = await Promise.all([load(dir), load(dir), load(dir), load(dir)]);
      expect((await owner!.start()).error).to.equal(undefined);
      await owner!.kill();
      await race(contenders, dir);
      await Promise.all([owner!, ...contenders].map((c) => c.reap()));
    }
  });

  it("a lock naming a live process with another start time (a reused pid) or another boot does not block", async () => {
    const me = procStat(process.pid)!;
    for (const text of [
      `${process.pid}\nstart ${Number(me.start) + 1}\nboot ${bootId()}\n`,
      `${process.ppid}\nstart 1\n`,
      `${process.ppid}\nstart ${procStat(process.ppid)!.start}\nboot 00000000-0000-0000-0000-000000000000\n`,
    ]) {
      writeFileSync(path.join(dir, "mongod.lock"), text);
      const mongo = await startEmbeddedMongo({ dbPath: dir });
      try {
        expect(lockOwner(dir)).to.deep.equal({ pid: process.pid, start: me.start, boot: bootId() });
      } finally {
        await mongo.stop();
      }
      expect(readdirSync(dir)).to.not.include("mongod.lock");
    }
  });

  it("a lock naming a live process with its start time blocks", async () => {
    writeFileSync(path.join(dir, "mongod.lock"), `${process.ppid}\nstart ${procStat(process.ppid)!.start}\nboot ${bootId()}\n`);
    const err = await startEmbeddedMongo({ dbPath: dir }).catch((e: Error) => e);
    expect(String(err)).to.contain(
      `DBPathInUse: Unable to lock the lock file: ${path.join(dir, "mongod.lock")}. Another server (pid ${process.ppid})`,
    );
  });

  it("one process: a server in a worker thread and one on the main thread cannot share a directory", async () => {
    const inWorker = await startEmbeddedMongo({ dbPath: dir, inWorkerThread: true });
    try {
      const err = await startEmbeddedMongo({ dbPath: dir }).catch((e: Error) => e);
      expect(String(err)).to.contain(`Another server of this process (pid ${process.pid}) is already running on`);
    } finally {
      await inWorker.stop();
    }
    const onMain = await startEmbeddedMongo({ dbPath: dir });
    try {
      const err = await startEmbeddedMongo({ dbPath: dir, inWorkerThread: true }).catch((e: Error) => e);
      expect(String(err)).to.contain("DBPathInUse");
    } finally {
      await onMain.stop();
    }
  });

  it("a claim left by a server that died while taking a dead lock over does not block", async () => {
    const lockPath = path.join(dir, "mongod.lock");
    const dead = `${process.pid}\nstart 1\nboot ${bootId()}\n`;
    writeFileSync(lockPath, dead);
    const claim = `mongod.lock.takeover.${statSync(lockPath).ino}-${createHash("sha256").update(dead).digest("hex").slice(0, 16)}.0`;
    writeFileSync(path.join(dir, claim), `${process.pid}\nstart 2\nboot ${bootId()}\n`);
    writeFileSync(path.join(dir, `mongod.lock.${process.pid}.0123456789ab.tmp`), `${process.pid}\nstart 3\n`);
    const mongo = await startEmbeddedMongo({ dbPath: dir });
    try {
      expect(readdirSync(dir).filter((f) => f.startsWith("mongod.lock"))).to.deep.equal(["mongod.lock"]);
      expect(lockOwner(dir).pid).to.equal(process.pid);
    } finally {
      await mongo.stop();
    }
  });
});
