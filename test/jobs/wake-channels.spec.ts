// The change stream that wakes Agenda hears of inserted jobs due soon, and of nothing else: a job due later (a
// delivery's guarantee, due one lease later) is found by a poll in time, so the database sends no event for it.
import { expect } from "chai";
import type { JobNotification } from "agenda";
import { WakeableChangeStreamChannel } from "../../src/jobs/wake-channels.ts";
import type { Database } from "../../src/store/database.ts";
import { freshDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

describe("The change stream that wakes Agenda", () => {
  let database: Database;
  let channel: WakeableChangeStreamChannel;
  const heard: JobNotification[] = [];

  before(async () => {
    database = await freshDatabase("wake_channel");
    channel = new WakeableChangeStreamChannel({ db: database.db, collection: "jobs", pollIntervalMs: 1000 });
    channel.subscribe((notification) => {
      heard.push(notification);
    });
    await channel.connect();
  });
  after(async () => {
    await channel.disconnect();
    await database.close();
  });

  it("tells of an inserted job due within two poll intervals, not of one due later nor of updates", async () => {
    const jobs = database.db.collection("jobs");
    const now = Date.now();
    await jobs.insertOne({ name: "later", nextRunAt: new Date(now + 60_000), lockedAt: null });
    await jobs.insertOne({ name: "past", nextRunAt: new Date(now - 5000), lockedAt: null });
    await jobs.insertOne({ name: "soon", nextRunAt: new Date(now + 1500), lockedAt: null });
    await jobs.updateOne({ name: "later" }, { $set: { nextRunAt: new Date(now) } });
    await jobs.insertOne({ name: "last", nextRunAt: new Date(now), lockedAt: null });
    const names = await eventually(
      async () => heard.map((n) => n.jobName),
      (seen) => seen.includes("last"),
    );
    expect(names).to.deep.equal(["past", "soon", "last"]);
  });
});
