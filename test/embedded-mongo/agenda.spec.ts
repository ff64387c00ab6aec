import { expect } from "chai";
import { Agenda, type Job } from "agenda";
import { MongoBackend } from "@agendajs/mongo-backend";
import { expectLength, useTestDatabase, waitFor } from "./helpers.ts";

describe("embedded-mongo: Agenda 6 with @agendajs/mongo-backend", function () {
  this.timeout(20000);
  const t = useTestDatabase("em_agenda");
  let agenda: Agenda;

  beforeEach(async () => {
    await t.db.collection("agendaJobs").deleteMany({});
    agenda = new Agenda({ backend: new MongoBackend({ mongo: t.db }), processEvery: 50, defaultLockLifetime: 10_000 });
  });

  afterEach(async () => {
    await agenda.stop();
  });

  it("runs a one-off job now and a job scheduled for later", async () => {
    const runs: string[] = [];
    agenda.define("greet", async (job: Job<{ who: string }>) => {
      runs.push(job.attrs.data.who);
    });
    await agenda.start();
    await agenda.now("greet", { who: "now" });
    await agenda.schedule(new Date(Date.now() + 300), "greet", { who: "later" });
    await waitFor(() => runs.length === 2);
    expect(runs).to.deep.equal(["now", "later"]);
  });

  it("runs a repeating job several times", async () => {
    let runs = 0;
    agenda.define("tick", async () => {
      runs++;
    });
    await agenda.start();
    await agenda.every(150, "tick");
    await waitFor(() => runs >= 3);
    const docs = await t.db.collection("agendaJobs").find({ name: "tick" }).toArray();
    expectLength(docs, 1); // a repeating job is one document rescheduled in place
    expect(docs[0].repeatInterval).to.equal(150);
  });

  it("keeps a unique job to a single document", async () => {
    agenda.define("unique-job", async () => undefined);
    for (let i = 0; i < 3; i++) {
      await agenda
        .create("unique-job", { entity: 7, n: i })
        .unique({ "data.entity": 7 })
        .schedule(new Date(Date.now() + 60_000))
        .save();
    }
    await agenda
      .create("unique-job", { entity: 8 })
      .unique({ "data.entity": 8 })
      .schedule(new Date(Date.now() + 60_000))
      .save();
    const docs = await t.db.collection("agendaJobs").find({ name: "unique-job" }).sort({ "data.entity": 1 }).toArray();
    expect(docs.map((d) => d.data.entity)).to.deep.equal([7, 8]);
    expectLength(docs, 2);
    expect(docs[0].data.n).to.equal(2);
  });

  it("picks up a job locked by a dead worker once its lock lifetime has passed", async () => {
    const lockLifetime = 400;
    let ranAt = 0;
    agenda.define(
      "orphan",
      async () => {
        ranAt = Date.now();
      },
      { lockLifetime },
    );
    // The dead worker: it locked the due job and vanished without finishing or unlocking it.
    const lockedAt = new Date();
    await t.db.collection("agendaJobs").insertOne({
      name: "orphan",
      data: {},
      type: "normal",
      priority: 0,
      nextRunAt: new Date(Date.now() - 1000),
      lockedAt,
      lastModifiedBy: "dead-worker",
    });
    await agenda.start();
    await waitFor(() => ranAt > 0);
    expect(ranAt - lockedAt.getTime()).to.be.at.least(lockLifetime - 50);
    const doc = await t.db.collection("agendaJobs").findOne({ name: "orphan" });
    expect(doc?.lastFinishedAt).to.be.instanceOf(Date);
  });

  it("never runs one job twice when two workers compete for it", async () => {
    const other = new Agenda({ backend: new MongoBackend({ mongo: t.db }), processEvery: 20, defaultLockLifetime: 10_000 });
    let runs = 0;
    const handler = async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 50));
    };
    agenda.define("contended", handler);
    other.define("contended", handler);
    try {
      for (let i = 0; i < 20; i++) await agenda.now("contended", { i });
      await Promise.all([agenda.start(), other.start()]);
      await waitFor(async () => (await t.db.collection("agendaJobs").countDocuments({ name: "contended", lastFinishedAt: { $ne: null } })) === 20);
      expect(runs).to.equal(20);
    } finally {
      await other.stop();
    }
  });
});
