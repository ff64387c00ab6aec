import { expect } from "chai";
import { Agenda } from "agenda";
import { MongoBackend, MongoChangeStreamNotificationChannel } from "@agendajs/mongo-backend";
import { MongoClient } from "mongodb";
import { startEmbeddedMongo, type EmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { waitFor } from "./helpers.ts";

describe("embedded-mongo: Agenda woken through a change stream (replica set)", function () {
  this.timeout(20000);
  let mongo: EmbeddedMongo;
  let schedulerClient: MongoClient;
  let workerClient: MongoClient;

  before(async () => {
    mongo = await startEmbeddedMongo({ replSet: "rs0" });
    schedulerClient = new MongoClient(mongo.uri);
    workerClient = new MongoClient(mongo.uri);
  });
  after(async () => {
    await schedulerClient.close();
    await workerClient.close();
    await mongo.stop();
  });

  it("a job scheduled by one instance runs at once on another whose poll interval is a minute", async () => {
    const collection = "jobs";
    // A short lock lifetime: Agenda keeps a timer of half of it after each run (10 min by default), which would
    // hold the test process for 5 minutes after the last test.
    const scheduler = new Agenda({
      backend: new MongoBackend({ mongo: schedulerClient.db("agenda_cs"), collection }),
      processEvery: 60_000,
      defaultLockLifetime: 2000,
    });
    const channel = new MongoChangeStreamNotificationChannel({ db: workerClient.db("agenda_cs"), collection });
    const worker = new Agenda({
      backend: new MongoBackend({ mongo: workerClient.db("agenda_cs"), collection }),
      processEvery: 60_000,
      defaultLockLifetime: 2000,
      notificationChannel: channel,
    });
    let ranAt = 0;
    worker.define("wake-up", async () => {
      ranAt = Date.now();
    });
    try {
      await worker.start();
      await scheduler.ready;
      // Let the worker's first poll (at start) pass, so only the change stream can bring the job.
      await new Promise((r) => setTimeout(r, 500));
      const scheduledAt = Date.now();
      await scheduler.now("wake-up", {});
      await waitFor(() => ranAt > 0, 8000);
      expect(ranAt - scheduledAt).to.be.below(5000);
    } finally {
      await worker.stop();
      await scheduler.stop();
    }
  });
});
