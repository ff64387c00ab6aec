// The indexes JobQueue adds for Agenda's queries: the due-job query answers each branch of its $or from
// (name, lockedAt, nextRunAt, priority) instead of walking past every locked job, and a unique save finds its job by
// (name, data.<field>...) instead of scanning the collection. Shown by explain, as on mongod.
import { expect } from "chai";
import type { Document } from "mongodb";
import { JobQueue } from "../../src/jobs/job-queue.ts";
import type { Database } from "../../src/store/database.ts";
import { freshDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { indexScans } from "../support/index-scans.ts";

describe("JobQueue indexes", () => {
  let database: Database;
  let queue: JobQueue;

  before(async () => {
    database = await freshDatabase("job_queue_indexes");
    queue = new JobQueue(database.db, { pollIntervalMs: 50, lockLifetimeMs: 60_000, maxConcurrency: 4, changeStreams: false });
  });
  after(async () => {
    await queue.stop();
    await database.close();
  });

  it("answers Agenda's due-job query by an index scan per branch, and a unique save by its key's index", async () => {
    const runs: string[] = [];
    queue.define<{ key: string }>("test-indexed", async (data) => {
      runs.push(data.key);
    });
    await queue.start();
    const jobs = database.db.collection("jobs");
    // 300 jobs locked by a worker now (due, so Agenda's own index meets them before any free one).
    const now = Date.now();
    await jobs.insertMany(
      Array.from({ length: 300 }, (_, i) => ({
        name: "test-indexed",
        data: { key: `locked-${i}` },
        nextRunAt: new Date(now - 60_000 + i),
        lockedAt: new Date(now),
        priority: 0,
        type: "normal",
      })),
    );
    await queue.schedule("test-indexed", { key: "a" }, new Date(), ["key"]);
    await eventually(
      async () => runs,
      (r) => r.includes("a"),
      5000,
    );
    expect(runs).to.deep.equal(["a"]);

    const due = {
      name: "test-indexed",
      disabled: { $ne: true },
      $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: new Date(Date.now() + 1000) } }, { lockedAt: { $lte: new Date(Date.now() - 60_000) } }],
    };
    const plan = (await jobs.find(due).sort({ nextRunAt: 1, priority: -1 }).limit(1).explain("executionStats")) as Document;
    expect(indexScans(plan.queryPlanner.winningPlan)).to.deep.equal([
      "name_1_lockedAt_1_nextRunAt_1_priority_-1",
      "name_1_lockedAt_1_nextRunAt_1_priority_-1",
    ]);
    expect(plan.executionStats.totalDocsExamined).to.be.below(10);

    const unique = (await jobs.find({ "data.key": "a", name: "test-indexed" }).explain("executionStats")) as Document;
    expect(indexScans(unique.queryPlanner.winningPlan)).to.deep.equal(["name_1_data.key_1"]);
    expect(unique.executionStats.totalDocsExamined).to.be.below(2);
  });
});
