// JobQueue over Agenda: a job whose run answers a date runs again then (the same job, rescheduled), and is
// removed once a run answers nothing; a finished run leaves no timer behind.
import { expect } from "chai";
import { JobQueue } from "../../src/jobs/job-queue.ts";
import type { Database } from "../../src/store/database.ts";
import { freshDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

describe("JobQueue", () => {
  let database: Database;
  let queue: JobQueue;

  before(async () => {
    database = await freshDatabase("job_queue");
    queue = new JobQueue(database.db, { pollIntervalMs: 50, lockLifetimeMs: 5000, maxConcurrency: 4, changeStreams: false });
  });
  after(async () => {
    await queue.stop();
    await database.close();
  });

  it("runs a job again at the date its run answers, as the same job, and removes it after its last run", async () => {
    const runs: { at: number; run: number }[] = [];
    queue.define<{ thing: string }>("test-rescheduled", async () => {
      runs.push({ at: Date.now(), run: runs.length + 1 });
      return runs.length < 3 ? new Date(Date.now() + 100) : undefined;
    });
    await queue.start();
    await queue.schedule("test-rescheduled", { thing: "a" }, new Date(), ["thing"]);
    const jobs = database.db.collection("jobs");
    await eventually(
      async () => runs.length,
      (count) => count === 3,
      5000,
    );
    await eventually(
      () => jobs.countDocuments({ name: "test-rescheduled" }),
      (count) => count === 0,
      5000,
    );
    expect(runs.map((r) => r.run)).to.deep.equal([1, 2, 3]);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.at - runs[i - 1]!.at).to.be.at.least(90);
  });

  it("runs a job whose run threw again, about a second later, instead of giving it up", async () => {
    const runs: number[] = [];
    queue.define<{ thing: string }>("test-failing-once", async () => {
      runs.push(Date.now());
      if (runs.length === 1) throw new Error("the database dropped the connection");
    });
    await queue.schedule("test-failing-once", { thing: "b" }, new Date(), ["thing"]);
    await eventually(
      async () => runs.length,
      (count) => count === 2,
      8000,
    );
    expect(runs[1]! - runs[0]!).to.be.at.least(700);
  });

  it("adds a job unique by a field once, whether its inserts come in one turn or later, and keeps the first one's time", async () => {
    const jobs = database.db.collection("jobs");
    const first = new Date(Date.now() + 3_600_000);
    // Not defined here: nothing runs them. Three in one turn (one command), then one more later.
    await Promise.all([1, 2, 3].map((k) => queue.insertUnique("test-unique-insert", { key: k % 2 }, first, "key")));
    await queue.insertUnique("test-unique-insert", { key: 1 }, new Date(), "key");
    const stored = await jobs.find({ name: "test-unique-insert" }, { sort: { "data.key": 1 } }).toArray();
    expect(stored.map((job) => job.data.key)).to.deep.equal([0, 1]);
    expect(stored.map((job) => job.nextRunAt.getTime())).to.deep.equal([first.getTime(), first.getTime()]);
  });

  it("keeps jobs unique by a field with the one-field index of ensureUniqueIndex, and drops the (name, field) index of earlier versions", async () => {
    const jobs = database.db.collection("jobs");
    await jobs.createIndex(
      { name: 1, "data.key": 1 },
      { name: "unique_test-index-shape", unique: true, partialFilterExpression: { name: "test-index-shape" } },
    );
    await queue.insertUnique("test-index-shape", { key: "a" }, new Date(Date.now() + 3_600_000), "key");
    await queue.insertUnique("test-index-shape", { key: "a" }, new Date(), "key");
    const indexes = (await jobs.indexes()).filter((index) => index.name?.includes("test-index-shape"));
    expect(indexes.map(({ name, key, unique, partialFilterExpression }) => ({ name, key, unique, partialFilterExpression }))).to.deep.equal([
      {
        name: "test-index-shape_unique_key",
        key: { "data.key": 1 },
        unique: true,
        partialFilterExpression: { name: "test-index-shape" },
      },
    ]);
    expect(await jobs.countDocuments({ name: "test-index-shape" })).to.equal(1);
  });

  it("writes a new job with the fields Agenda's inserts give it and, null, the state its runs' saves set", async () => {
    const jobs = database.db.collection("jobs");
    const at = new Date(Date.now() + 3_600_000);
    await queue.insertUnique("test-new-job-fields", { key: "a" }, at, "key");
    const { _id, ...stored } = (await jobs.findOne({ name: "test-new-job-fields" }))!;
    expect(stored).to.deep.equal({
      name: "test-new-job-fields",
      data: { key: "a" },
      nextRunAt: at,
      priority: 0,
      type: "normal",
      lockedAt: null,
      lastModifiedBy: null,
      disabled: null,
      lastRunAt: null,
      progress: null,
      failReason: null,
      failCount: null,
      failedAt: null,
      lastFinishedAt: null,
    });
  });

  it("keeps nothing of a finished run: Agenda's liveness check of a run ends with it, its timer cleared", async () => {
    // Agenda checks a running job every half lock lifetime (here 5 minutes). Unpatched (patches/agenda+6.2.6.patch),
    // that wait outlived the run, a timer holding the job for up to 5 minutes after every run.
    const longLocks = new JobQueue(database.db, { pollIntervalMs: 50, lockLifetimeMs: 600_000, maxConcurrency: 8, changeStreams: false });
    const ran: number[] = [];
    longLocks.define<{ n: number }>("test-liveness", async ({ n }) => {
      ran.push(n);
    });
    await longLocks.start();
    try {
      const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === "Timeout").length;
      const before = timers();
      for (let n = 0; n < 40; n++) await longLocks.schedule("test-liveness", { n }, new Date());
      await eventually(
        async () => ran.length,
        (count) => count === 40,
        5000,
      );
      expect(timers() - before).to.be.below(10);
    } finally {
      await longLocks.stop();
    }
  });
});
