// JobQueue's repository for Agenda writes the commands of many job runs together: a burst of due jobs is locked
// a batch at a time (never more than may run at once), their state saves share bulk writes, and a finished one-time
// job is removed by the save that ends its run; the save that starts a run is not written. What Agenda guarantees
// stays: every job runs once, two queues never run the same job (also while one stops), a failed run keeps its job
// for the retry, and nothing stays locked when a queue stops.
import { expect } from "chai";
import { type CommandStartedEvent, MongoClient } from "mongodb";
import { BatchedJobRepository } from "../../src/jobs/batched-job-repository.ts";
import { JobQueue } from "../../src/jobs/job-queue.ts";
import { freshDatabaseUri } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

describe("JobQueue's batched repository", () => {
  let client: MongoClient;
  const commands: CommandStartedEvent[] = [];
  const queues: JobQueue[] = [];

  before(async () => {
    client = new MongoClient(await freshDatabaseUri("job_batches"), { monitorCommands: true });
    await client.connect();
    client.on("commandStarted", (event) => commands.push(event));
  });
  afterEach(async () => {
    await Promise.all(queues.splice(0).map((q) => q.stop()));
  });
  after(() => client.close());

  function queue(maxConcurrency: number): JobQueue {
    const q = new JobQueue(client.db(), { pollIntervalMs: 100, lockLifetimeMs: 10_000, maxConcurrency, changeStreams: true });
    queues.push(q);
    return q;
  }

  const jobs = () => client.db().collection("jobs");
  const countOf = (name: string) => jobs().countDocuments({ name });
  /** The commands that lock, save and remove jobs, sent since `from` (not the test's counts or the change stream). */
  const jobCommands = (from: number) =>
    commands.slice(from).filter((c) => ["find", "update", "delete", "findAndModify"].includes(c.commandName) && c.command[c.commandName] === "jobs");

  it("runs a burst of 400 due jobs once each, and removes them, with a fraction of the commands Agenda alone sends", async () => {
    const q = queue(20);
    const runs = new Map<number, number>();
    q.define<{ n: number }>("test-burst", async ({ n }) => {
      runs.set(n, (runs.get(n) ?? 0) + 1);
    });
    await q.start();
    const from = commands.length;
    await Promise.all(Array.from({ length: 400 }, (_, n) => q.insertUnique("test-burst", { n }, new Date(), "n")));
    await eventually(
      () => countOf("test-burst"),
      (left) => left === 0,
      20_000,
    );
    expect(runs.size).to.equal(400);
    expect([...runs.values()].every((count) => count === 1)).to.equal(true);
    const sent = jobCommands(from);
    // Agenda alone sends a lock, two state saves and a removal per job (1,600 here), and a failed lock per
    // notification. Batched, a burst takes about one command per job or fewer; the bound leaves room for a loaded
    // machine, where jobs trickle in and batches are smaller, while still failing Agenda's own per-job commands.
    expect(sent.length, sent.map((c) => c.commandName).join(",")).to.be.below(800);
    expect(sent.filter((c) => c.commandName === "findAndModify")).to.have.length(0);
  });

  it("never runs a job twice when two queues share 300 due jobs", async () => {
    const [a, b] = [queue(10), queue(10)];
    const runs = new Map<number, string[]>();
    for (const [label, q] of [
      ["a", a],
      ["b", b],
    ] as const) {
      q.define<{ n: number }>("test-shared", async ({ n }) => {
        runs.set(n, [...(runs.get(n) ?? []), label]);
        await new Promise((resolve) => setTimeout(resolve, 2));
      });
    }
    await Promise.all([a.start(), b.start()]);
    await jobs().insertMany(
      Array.from({ length: 300 }, (_, n) => ({
        name: "test-shared",
        data: { n },
        type: "normal",
        priority: 0,
        nextRunAt: new Date(),
        lockedAt: null,
      })),
    );
    await eventually(
      () => countOf("test-shared"),
      (left) => left === 0,
      20_000,
    );
    expect(runs.size).to.equal(300);
    expect([...runs.values()].filter((labels) => labels.length !== 1)).to.deep.equal([]);
    const byA = [...runs.values()].filter((labels) => labels[0] === "a").length;
    expect(byA, "both queues took jobs").to.be.within(1, 299);
  });

  it("keeps a job whose run failed, due again with its failure recorded, and removes it when a run succeeds", async () => {
    const q = queue(4);
    let attempts = 0;
    q.define<{ n: number }>("test-fails-once", async () => {
      attempts += 1;
      if (attempts === 1) throw new Error("the endpoint is down");
    });
    await q.start();
    await q.insertUnique("test-fails-once", { n: 1 }, new Date(), "n");
    const failed = await eventually(
      () => jobs().findOne({ name: "test-fails-once" }),
      (job) => job !== null && job.failCount === 1 && job.lockedAt === null,
      5000,
    );
    expect(failed!.failReason).to.equal("the endpoint is down");
    expect(failed!.nextRunAt.getTime()).to.be.greaterThan(failed!.failedAt.getTime());
    await eventually(
      () => countOf("test-fails-once"),
      (left) => left === 0,
      8000,
    );
    expect(attempts).to.equal(2);
  });

  it("holds locked only as many jobs as it may run at once, and leaves none locked when it stops", async () => {
    const q = queue(2);
    let release: () => void = () => {};
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    q.define<{ n: number }>("test-held", () => {
      runs += 1;
      return blocked;
    });
    try {
      await q.start();
      await Promise.all(Array.from({ length: 30 }, (_, n) => q.insertUnique("test-held", { n }, new Date(), "n")));
      await eventually(
        async () => runs,
        (count) => count === 2,
        5000,
      );
      // The other 28 stay free for other workers while the two runs take their time.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await jobs().countDocuments({ name: "test-held", lockedAt: { $ne: null } })).to.equal(2);
      const stopped = q.stop();
      release();
      await stopped;
    } finally {
      release();
    }
    queues.splice(queues.indexOf(q), 1);
    expect(await jobs().countDocuments({ name: "test-held", lockedAt: { $ne: null } })).to.equal(0);
    expect(await countOf("test-held")).to.equal(30 - runs);
  });

  it("with a lock limit above the concurrency, holds the next jobs locked while its runs take their time, never running more at once", async () => {
    const q = queue(4);
    let release: () => void = () => {};
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    let most = 0;
    let runs = 0;
    q.define<{ n: number }>(
      "test-ahead",
      async () => {
        running += 1;
        most = Math.max(most, running);
        runs += 1;
        await blocked;
        running -= 1;
      },
      { concurrency: 2, lockLimit: 4, lockBatch: 2 },
    );
    try {
      await q.start();
      await Promise.all(Array.from({ length: 12 }, (_, n) => q.insertUnique("test-ahead", { n }, new Date(), "n")));
      await eventually(
        () => jobs().countDocuments({ name: "test-ahead", lockedAt: { $ne: null } }),
        (count) => count === 4,
        5000,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(runs, "two run, two wait locked").to.equal(2);
      expect(await jobs().countDocuments({ name: "test-ahead", lockedAt: { $ne: null } }), "no more than the lock limit").to.equal(4);
      release();
      await eventually(
        () => countOf("test-ahead"),
        (left) => left === 0,
        8000,
      );
      expect(runs).to.equal(12);
      expect(most, "never more than the concurrency at once").to.equal(2);
    } finally {
      release();
    }
  });

  /** The repository alone, as Agenda calls it: due jobs of `name` inserted, `limit` of them held at most. */
  async function repositoryWith(name: string, due: number, limit: number, batch?: number, handLimit?: number): Promise<BatchedJobRepository> {
    const repository = new BatchedJobRepository(client.db(), "jobs", limit, true);
    await repository.connect();
    repository.limitLocks(name, limit, batch, handLimit);
    const at = new Date(Date.now() - 1000);
    await jobs().insertMany(
      Array.from({ length: due }, (_, n) => ({ name, data: { n }, type: "normal", priority: 0, nextRunAt: at, lockedAt: null })),
    );
    return repository;
  }
  const options = { lastModifiedBy: "test:1" };

  it("unlocks and locks afresh the jobs of a batch whose locks have aged past half their lifetime before Agenda takes them", async () => {
    const repository = await repositoryWith("test-aged", 3, 10);
    const lockLifetimeMs = 2000;
    const next = () => repository.getNextJobToRun("test-aged", new Date(), new Date(Date.now() - lockLifetimeMs), undefined, options);
    const first = await next();
    const firstLock = new Date(first!.lockedAt!).getTime();
    // The batch locked all three; two wait in the repository while their locks age.
    await new Promise((resolve) => setTimeout(resolve, lockLifetimeMs / 2 + 50));
    const second = await next();
    expect(second, "a job of the batch is handed over").to.not.equal(undefined);
    expect(new Date(second!.lockedAt!).getTime(), "locked again, later").to.be.greaterThan(firstLock + lockLifetimeMs / 2);
    const stored = await jobs().find({ name: "test-aged" }).toArray();
    // Nothing is left with the aged lock: Agenda would drop such a job unrun and leave it locked.
    expect(stored.filter((job) => job.lockedAt?.getTime() === firstLock).map((job) => job.data.n)).to.deep.equal([(first!.data as { n: number }).n]);
  });

  it("locks a name's jobs a lock batch at a time up to its limit, and wakes Agenda once a batch's worth is free", async () => {
    const repository = await repositoryWith("test-groups", 10, 6, 2);
    const next = () => repository.getNextJobToRun("test-groups", new Date(), new Date(Date.now() - 60_000), undefined, options);
    const locked = () => jobs().countDocuments({ name: "test-groups", lockedAt: { $ne: null } });
    const held = [await next()];
    expect(await locked(), "the first call locks one batch").to.equal(2);
    for (let i = 0; i < 5; i++) held.push(await next());
    expect(held.every((job) => job !== undefined)).to.equal(true);
    expect(await next(), "the limit is reached").to.equal(undefined);
    expect(await locked(), "no more than the limit locked").to.equal(6);
    let wakes = 0;
    repository.onRoom = () => {
      wakes += 1;
    };
    const end = (job: (typeof held)[number]) => {
      const now = new Date();
      const { lockedAt: _, ...unlocked } = job!;
      return repository.saveJobState({ ...unlocked, nextRunAt: null, lastRunAt: now, lastFinishedAt: now }, options);
    };
    await end(held[0]);
    expect(wakes, "one place free: less than a batch").to.equal(0);
    await end(held[1]);
    expect(wakes, "a batch's worth free").to.equal(1);
    expect(await next(), "locks again").to.not.equal(undefined);
    expect(await locked(), "four held, and one more batch").to.equal(6);
  });

  it("with a hand limit below the lock limit, hands Agenda no more than it, locks the next batch ahead, and wakes Agenda as places free", async () => {
    const repository = await repositoryWith("test-ahead-locks", 10, 6, 2, 2);
    const next = () => repository.getNextJobToRun("test-ahead-locks", new Date(), new Date(Date.now() - 60_000), undefined, options);
    const locked = () => jobs().countDocuments({ name: "test-ahead-locks", lockedAt: { $ne: null } });
    const handed = [await next(), await next()];
    expect(handed.every((job) => job !== undefined)).to.equal(true);
    expect(await next(), "the hand limit is reached").to.equal(undefined);
    // Two handed, and the batch locked ahead when the first was handed.
    await eventually(locked, (count) => count === 4, 2000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await locked(), "nothing more while nothing is handed").to.equal(4);
    let wakes = 0;
    repository.onRoom = () => {
      wakes += 1;
    };
    const now = new Date();
    const { lockedAt: _, ...unlocked } = handed[0]!;
    await repository.saveJobState({ ...unlocked, nextRunAt: null, lastRunAt: now, lastFinishedAt: now }, options);
    expect(wakes, "a place free: Agenda is woken").to.equal(1);
    expect(await next(), "handed from what was locked ahead").to.not.equal(undefined);
    // The finished one removed; two handed, one left ahead, and the next batch locked ahead of them.
    await eventually(locked, (count) => count === 5, 2000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await locked()).to.equal(5);
  });

  it("holds jobs due later locked until they are due, then wakes Agenda and hands them, never locking beyond the lock limit", async () => {
    const repository = new BatchedJobRepository(client.db(), "jobs", 2, true);
    await repository.connect();
    repository.limitLocks("test-later", 2, 2);
    const woken: number[] = [];
    repository.onRoom = () => woken.push(Date.now());
    const later = new Date(Date.now() + 400);
    await jobs().insertMany(
      Array.from({ length: 4 }, (_, n) => ({ name: "test-later", data: { n }, type: "normal", priority: 0, nextRunAt: later, lockedAt: null })),
    );
    const next = () => repository.getNextJobToRun("test-later", new Date(Date.now() + 1000), new Date(Date.now() - 60_000), undefined, options);
    expect(await next(), "not due yet: nothing handed").to.equal(undefined);
    expect(await jobs().countDocuments({ name: "test-later", lockedAt: { $ne: null } }), "locked ahead, up to the limit").to.equal(2);
    expect(await next(), "still not due, and the limit is reached: no other batch").to.equal(undefined);
    await eventually(
      async () => woken.length,
      (count) => count > 0,
      5000,
    );
    expect(woken[0]!, "woken once the first is due").to.be.at.least(later.getTime());
    expect(await next()).to.not.equal(undefined);
    expect(await next()).to.not.equal(undefined);
    expect(await next(), "the lock limit is reached").to.equal(undefined);
    expect(await jobs().countDocuments({ name: "test-later", lockedAt: { $ne: null } })).to.equal(2);
    await repository.close();
  });

  it("frees the place of a run once the save that ends it is written, not before", async () => {
    const repository = await repositoryWith("test-place", 2, 1);
    const next = () => repository.getNextJobToRun("test-place", new Date(), new Date(Date.now() - 60_000), undefined, options);
    const job = await next();
    expect(await next(), "the limit is reached").to.equal(undefined);
    let jobsWhenWoken: Promise<number> | undefined;
    repository.onRoom = () => {
      jobsWhenWoken ??= countOf("test-place");
    };
    const now = new Date();
    const { lockedAt: _, ...unlocked } = job!;
    const ended = repository.saveJobState({ ...unlocked, nextRunAt: null, lastRunAt: now, lastFinishedAt: now }, options);
    expect(jobsWhenWoken, "woken only once the end of the run is written").to.equal(undefined);
    await ended;
    expect(await jobsWhenWoken, "the finished job was removed before the wake-up").to.equal(1);
    expect(await next(), "the other job is handed over").to.not.equal(undefined);
  });

  it("writes nothing when a run starts, and keeps a running job locked while its queue stops, so no other queue starts it", async () => {
    const a = queue(2);
    let release: () => void = () => {};
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const runs: string[] = [];
    a.define<{ n: number }>("test-stopping", async () => {
      runs.push("a");
      await blocked;
    });
    try {
      await a.start();
      const from = commands.length;
      await a.insertUnique("test-stopping", { n: 1 }, new Date(), "n");
      await eventually(
        async () => runs.length,
        (count) => count === 1,
        5000,
      );
      const locked = await jobs().findOne({ name: "test-stopping" });
      const stopped = a.stop();
      // Another queue looks for due jobs while the first stops with its run under way.
      const b = queue(2);
      b.define<{ n: number }>("test-stopping", async () => {
        runs.push("b");
      });
      await b.start();
      await new Promise((resolve) => setTimeout(resolve, 400));
      const during = await jobs().findOne({ name: "test-stopping" });
      expect(during!.lockedAt, "still locked by the stopping queue").to.deep.equal(locked!.lockedAt);
      expect(during!.lastRunAt ?? null, "the start of the run was not saved").to.equal(null);
      expect(
        jobCommands(from).filter((c) => c.commandName === "update" && JSON.stringify(c.command.updates).includes("lastRunAt")),
        "no state save while the run is under way",
      ).to.deep.equal([]);
      release();
      await stopped;
    } finally {
      release();
    }
    await eventually(
      () => countOf("test-stopping"),
      (left) => left === 0,
      5000,
    );
    expect(runs).to.deep.equal(["a"]);
  });
});
