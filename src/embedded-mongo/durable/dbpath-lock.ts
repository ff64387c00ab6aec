// The data directory's lock, `mongod.lock`, with mongod's semantics: one server per directory, and a lock whose
// owner died (killed, crashed, still a zombie nobody reaped, or a pid reused since) never blocks a restart.
//
// mongod holds an flock the kernel drops when its process dies; Node has none. Here the lock file names its owner
// as precisely as the OS allows: pid, the process's start time (/proc/<pid>/stat field 22, clock ticks since
// boot) and the boot id. The owner is alive only while /proc/<pid>/stat exists, shows the same start time and a
// state other than Z (zombie) or X (dead), on the same boot. Without /proc only the pid can be checked.
//
// Every file the lock uses is complete before anyone can see it under its name: a server writes its identity to
// a temporary file (fsynced), then links it to `mongod.lock` (link fails if the name exists: of two servers
// starting at once exactly one links). A lock whose owner is dead is replaced by renaming over it, but only by
// the holder of a claim on that very lock file: `mongod.lock.takeover.<id of the dead lock>.<generation>`,
// created by link too, so exactly one claimant exists. A claimant that dies before renaming is succeeded by
// the next generation, claimed only once the previous claimant is dead. A claimant renames only after checking,
// under its claim, that `mongod.lock` is still the dead lock it judged.
//
// The owner is the process: several servers of one process (threads) tell their locks apart by open files. A
// server keeps its lock file open while it runs; a lock naming this process belongs to a live server only if
// some thread of this process has the file open.
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { syncDirectory } from "./journal.ts";

export const LOCK_FILE = "mongod.lock";
const TAKEOVER_PREFIX = `${LOCK_FILE}.takeover.`;
/** How long a start waits for another server's takeover of a dead lock to finish (or keeps retrying). */
const TAKEOVER_WAIT_MS = 10_000;

const hasProc = existsSync("/proc/self/stat");

interface Identity {
  pid: number;
  /** Start time of the process, clock ticks since boot (/proc/<pid>/stat field 22). */
  start?: string;
  /** /proc/sys/kernel/random/boot_id */
  boot?: string;
}

interface LockFile {
  owner: Identity | undefined;
  text: string;
  dev: bigint;
  ino: bigint;
}

/** Field 3 (state) and 22 (start time) of /proc/<pid>/stat, undefined once the process is reaped. */
export function procStat(pid: number | "self"): { state: string; start: string } | undefined {
  try {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are counted after the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, start: fields[19]! };
  } catch {
    return undefined;
  }
}

let self: Identity | undefined;
function selfIdentity(): Identity {
  if (self) return self;
  self = { pid: process.pid };
  if (hasProc) {
    const start = procStat("self")?.start;
    if (start !== undefined) self.start = start;
    try {
      self.boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      // No boot id: the start time alone tells a reused pid apart.
    }
  }
  return self;
}

function identityText(id: Identity): string {
  // The pid first, on a line of its own, as mongod writes its lock file.
  return `${id.pid}\n${id.start !== undefined ? `start ${id.start}\n` : ""}${id.boot !== undefined ? `boot ${id.boot}\n` : ""}`;
}

function parseIdentity(text: string): Identity | undefined {
  const [first, ...rest] = text.split("\n");
  const pid = Number(first);
  if (!/^\d+$/.test(first ?? "") || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const id: Identity = { pid };
  for (const line of rest) {
    const [key, value] = line.split(" ");
    if (key === "start" && value) id.start = value;
    else if (key === "boot" && value) id.boot = value;
  }
  return id;
}

function readLockFile(file: string): LockFile | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const { dev, ino } = fstatSync(fd, { bigint: true });
    const text = readFileSync(fd, "utf8");
    return { owner: parseIdentity(text), text, dev, ino };
  } finally {
    closeSync(fd);
  }
}

/** Whether process `pid` exists as far as a signal can tell (a zombie or a reused pid count as existing). */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Files (dev:ino) held open by the servers of this thread; the whole process's are found through its fds. */
const heldInThread = new Set<string>();
const fileKey = (dev: bigint, ino: bigint) => `${dev}:${ino}`;

/** Whether some thread of this process has the file open (a live server of this process holds it). */
function heldByThisProcess(file: LockFile): boolean {
  const key = fileKey(file.dev, file.ino);
  if (heldInThread.has(key)) return true;
  const fdDir = hasProc ? "/proc/self/fd" : "/dev/fd";
  let fds: string[];
  try {
    fds = readdirSync(fdDir);
  } catch {
    return false; // only this thread's servers can be seen
  }
  for (const name of fds) {
    try {
      const { dev, ino } = fstatSync(Number(name), { bigint: true });
      if (dev === file.dev && ino === file.ino) return true;
    } catch {
      // closed since the directory was read
    }
  }
  return false;
}

/** Whether the identity in `file` names a live process that may hold it. */
function ownerAlive(file: LockFile): boolean {
  const owner = file.owner;
  if (!owner) return false; // not written by a server (a lock file is complete before it has its name)
  const me = selfIdentity();
  if (owner.boot !== undefined && me.boot !== undefined && owner.boot !== me.boot) return false; // before a reboot
  if (owner.pid === me.pid && (owner.start === undefined || owner.start === me.start)) return heldByThisProcess(file);
  if (!hasProc) return pidExists(owner.pid);
  const stat = procStat(owner.pid);
  // No /proc entry: gone, unless /proc hides other users' processes (hidepid) and a signal still finds it.
  if (!stat) return pidExists(owner.pid);
  if (stat.state === "Z" || stat.state === "X") return false;
  return owner.start === undefined || owner.start === stat.start;
}

function inUse(lockPath: string, dir: string, pid: number, doing = "is already running on"): Error {
  const who = pid === process.pid ? `Another server of this process (pid ${pid})` : `Another server (pid ${pid})`;
  return new Error(`DBPathInUse: Unable to lock the lock file: ${lockPath}. ${who} ${doing} ${dir}`);
}

/** The lock of a data directory, held until `release()`. */
export class DbPathLock {
  private released = false;

  private constructor(
    readonly dir: string,
    private readonly fd: number,
    private readonly key: string,
  ) {}

  /**
   * Takes `dir` for this server, as mongod's mongod.lock does: DBPathInUse while a live server holds it, taken over
   * when its owner is dead.
   */
  static async acquire(dir: string): Promise<DbPathLock> {
    const lockPath = path.join(dir, LOCK_FILE);
    const text = identityText(selfIdentity());
    const waitUntil = Date.now() + TAKEOVER_WAIT_MS;
    for (;;) {
      const tmp = path.join(dir, `${LOCK_FILE}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
      const fd = openSync(tmp, "wx+");
      const { dev, ino } = fstatSync(fd, { bigint: true });
      const key = fileKey(dev, ino);
      // Held from before it has its name: another thread of this process sees it held as soon as it can read it.
      heldInThread.add(key);
      let outcome: "won" | "retry" | { waitFor: number } = "retry";
      try {
        writeSync(fd, text);
        fsyncSync(fd);
        outcome = DbPathLock.attempt(dir, lockPath, tmp);
      } finally {
        if (outcome !== "won") {
          heldInThread.delete(key);
          closeSync(fd);
        }
        rmQuietly(tmp);
      }
      if (outcome === "won") {
        syncDirectory(dir);
        removeLeftovers(dir);
        return new DbPathLock(dir, fd, key);
      }
      if (Date.now() > waitUntil) {
        if (typeof outcome === "object") throw inUse(lockPath, dir, outcome.waitFor, "is taking over the lock of");
        throw new Error(`DBPathInUse: Unable to lock the lock file: ${lockPath}. It keeps changing: other servers are starting on ${dir}`);
      }
      if (typeof outcome === "object") await sleep(5);
    }
  }

  /** One try with the complete temporary file `tmp`: "won", "retry" at once, or wait for a live claimant. */
  private static attempt(dir: string, lockPath: string, tmp: string): "won" | "retry" | { waitFor: number } {
    try {
      linkSync(tmp, lockPath);
      return "won";
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const current = readLockFile(lockPath);
    if (!current) return "retry"; // released meanwhile
    if (ownerAlive(current)) throw inUse(lockPath, dir, current.owner!.pid);

    // The owner is dead: take over, holding the one claim on this very lock file.
    const base = `${TAKEOVER_PREFIX}${current.ino}-${createHash("sha256").update(current.text).digest("hex").slice(0, 16)}.`;
    const generations = readdirSync(dir)
      .filter((f) => f.startsWith(base))
      .map((f) => Number(f.slice(base.length)))
      .filter((g) => Number.isSafeInteger(g) && g >= 0);
    const top = generations.length ? Math.max(...generations) : -1;
    if (top >= 0) {
      const previous = readLockFile(path.join(dir, `${base}${top}`));
      if (!previous) return "retry"; // the takeover it belonged to is over
      if (ownerAlive(previous)) return { waitFor: previous.owner!.pid };
    }
    const claim = path.join(dir, `${base}${top + 1}`);
    try {
      linkSync(tmp, claim);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return "retry";
      throw err;
    }
    try {
      const now = readLockFile(lockPath);
      if (!now || now.dev !== current.dev || now.ino !== current.ino || now.text !== current.text) return "retry";
      renameSync(tmp, lockPath);
      for (const g of [...generations, top + 1]) rmQuietly(path.join(dir, `${base}${g}`));
      return "won";
    } finally {
      rmQuietly(claim);
    }
  }

  /** Gives the directory up (the lock file is removed if it is still this server's). */
  release(): void {
    if (this.released) return;
    this.released = true;
    try {
      const lockPath = path.join(this.dir, LOCK_FILE);
      const mine = fstatSync(this.fd, { bigint: true });
      const named = statSync(lockPath, { bigint: true, throwIfNoEntry: false });
      if (named && named.dev === mine.dev && named.ino === mine.ino) unlinkSync(lockPath);
    } finally {
      heldInThread.delete(this.key);
      closeSync(this.fd);
    }
  }
}

function rmQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** Temporary files and claims left by servers that died while starting. */
function removeLeftovers(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${LOCK_FILE}.`) || !(name.startsWith(TAKEOVER_PREFIX) || name.endsWith(".tmp"))) continue;
    const file = path.join(dir, name);
    try {
      const found = readLockFile(file);
      // A temporary file still being written has no owner yet: left alone.
      if (found?.owner && !ownerAlive(found)) rmQuietly(file);
    } catch {
      // gone meanwhile
    }
  }
}
