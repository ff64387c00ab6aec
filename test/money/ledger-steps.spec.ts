// The ledger's steps as Agenda jobs: one `transaction-step` job per transaction, written before the transaction is
// opened, whose nextRunAt is the time of the transaction's next step, moved along by its own runs and removed once
// no step is left. A run whose transaction has nothing to do (canceled, settled by a call, not opened) writes
// nothing.
import { expect } from "chai";
import type { ObjectId } from "mongodb";
import { TRANSACTION_STEP_JOB } from "../../src/ledger/transaction-step-job.ts";
import { eventually } from "../support/eventually.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser, balanceOf, eventsOf, fund } from "./support.ts";

interface StepJob {
  _id: ObjectId;
  name: string;
  nextRunAt: Date | null;
  lockedAt: Date | null;
  data: { transactionId: string };
}

describe("ledger steps as Agenda jobs", function () {
  this.timeout(30_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ timings: { jobPollMs: 100 } });
  });

  after(async () => {
    await svc.stop();
  });

  const jobsOf = (transactionId: string) =>
    svc.database.db.collection<StepJob>("jobs").find({ name: TRANSACTION_STEP_JOB, "data.transactionId": transactionId }).toArray();

  it("a pending withdrawal's step is one job due 1 s after creation, moved to 2 s by its run, removed once settled", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 50);
    const created = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 5 } });
    expect(created.status).to.equal(201);
    const createdAt = Date.parse(created.body.created_at);
    const first = await jobsOf(created.body.id);
    expect(first).to.have.length(1);
    expect(first[0]!.nextRunAt!.getTime()).to.equal(createdAt + 1000);
    // The job's saves as they happen: on a loaded machine the state between the two runs may last too short a time
    // to be seen by polling.
    const saves: { lockedAt?: Date | null; nextRunAt?: Date | null }[] = [];
    const stream = svc.database.db.collection<StepJob>("jobs").watch([{ $match: { operationType: "update", "documentKey._id": first[0]!._id } }]);
    stream.on("change", (change) => {
      if (change.operationType === "update") saves.push(change.updateDescription.updatedFields ?? {});
    });

    const processing = await eventually(
      () => svc.request("GET", `/v1/transactions/${created.body.id}`),
      (r) => r.body.status === "processing",
      5000,
    );
    expect(Date.parse(processing.body.updated_at)).to.be.at.least(createdAt + 1000);
    // The run that moved it to processing saves its next run when it ends: the settlement, 2 s after creation.
    const moved = await eventually(
      async () => saves,
      (seen) => seen.some((save) => save.lockedAt === null && save.nextRunAt?.getTime() === createdAt + 2000),
      3000,
    ).finally(() => stream.close());
    expect(moved.length).to.be.at.least(1);

    const completed = await eventually(
      () => svc.request("GET", `/v1/transactions/${created.body.id}`),
      (r) => r.body.status === "completed",
      5000,
    );
    expect(Date.parse(completed.body.updated_at)).to.be.at.least(createdAt + 2000);
    expect(
      await eventually(
        () => jobsOf(created.body.id),
        (jobs) => jobs.length === 0,
        3000,
      ),
    ).to.deep.equal([]);
    expect((await eventsOf(svc, created.body.id)).map((e) => e.type)).to.deep.equal(["transaction.completed", "withdrawal.completed"]);
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 45, pending_in_usd: 0, pending_out_usd: 0 });
    // The settled transaction leaves the ledger, and its events the outbox, in one write once they are logged.
    const owner = await eventually(
      () => svc.database.db.collection("users").findOne({ _id: user as never }),
      (doc) => doc !== null && !(created.body.id in (doc.ledger?.inflight ?? {})),
      3000,
    );
    expect(owner!.outbox).to.deep.equal([]);
    expect(owner!.ledger.moves ?? {}).to.deep.equal({});
  });

  it("a deposit's job is due at complete_after_seconds; a refused opening leaves no job", async () => {
    const user = await approvedUser(svc);
    const deposit = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 10, complete_after_seconds: 600 } });
    expect(deposit.status).to.equal(201);
    const [job] = await jobsOf(deposit.body.id);
    expect(job!.nextRunAt!.getTime()).to.equal(Date.parse(deposit.body.created_at) + 600_000);

    const before = await svc.database.db.collection("jobs").countDocuments({ name: TRANSACTION_STEP_JOB });
    const refused = await svc.request("POST", `/v1/users/${user}/withdrawals`, {
      body: { amount_usd: 5 },
      headers: { "idempotency-key": "steps-refused" },
    });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal("insufficient_funds");
    expect(await svc.database.db.collection("jobs").countDocuments({ name: TRANSACTION_STEP_JOB })).to.equal(before);
  });

  it("a withdrawal canceled before its step: the job's run finds nothing to do and writes nothing", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 20);
    const created = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 5 } });
    expect(created.status).to.equal(201);
    const canceled = await svc.request("POST", `/v1/transactions/${created.body.id}/cancel`);
    expect(canceled.status).to.equal(200);
    expect(await jobsOf(created.body.id)).to.have.length(1);
    expect(
      await eventually(
        () => jobsOf(created.body.id),
        (jobs) => jobs.length === 0,
        5000,
      ),
    ).to.deep.equal([]);
    const read = await svc.request("GET", `/v1/transactions/${created.body.id}`);
    expect(read.body.status).to.equal("canceled");
    expect(read.body.updated_at).to.equal(canceled.body.updated_at);
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 20, pending_in_usd: 0, pending_out_usd: 0 });
  });

  it("a job whose transaction is not opened looks again while its opening may still land, then ends", async () => {
    // Written before the opening, as the ledger does; here no opening follows (its process died, or is slow).
    const jobs = svc.database.db.collection("jobs");
    const job = (transactionId: string, openedAt: Date) => ({
      name: TRANSACTION_STEP_JOB,
      data: { transactionId, openedAt, completeAfterMs: 0 },
      type: "normal",
      priority: 0,
      nextRunAt: new Date(),
      lockedAt: null,
    });
    await jobs.insertMany([
      job("txn_stepsnotopenedyet0000000001", new Date()),
      job("txn_stepsnotopenedlong000000001", new Date(Date.now() - 600_000)),
    ]);
    const waiting = await eventually(
      () => jobs.findOne({ "data.transactionId": "txn_stepsnotopenedyet0000000001" }),
      (found) => found !== null && found.lastRunAt != null && found.lockedAt === null,
      5000,
    );
    expect(waiting!.nextRunAt.getTime(), "looked at again later").to.be.above(waiting!.lastRunAt.getTime());
    expect(
      await eventually(
        () => jobs.findOne({ "data.transactionId": "txn_stepsnotopenedlong000000001" }),
        (found) => found === null,
        5000,
      ),
      "ended: its opening can no longer land",
    ).to.equal(null);
    await jobs.deleteMany({ "data.transactionId": "txn_stepsnotopenedyet0000000001" });
  });
});
