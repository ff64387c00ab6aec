// Moves of KYC sessions and of a user's suspension with an Idempotency-Key whose first run was cut off: the
// sandbox's submit, approve and reject, cancel, AdminService.RecordKycDecision, SuspendUser and UnsuspendUser. Cut
// after its write (a crash, or a 5xx once written), the retry answers the moved object as the first run did, with
// the move's event once; cut before its write, the retry applies it; moved by anyone else, the retry of a KYC move
// is 409 invalid_state as before.
import { toJson } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { KycSessionSchema } from "../../gen/svc/v1/identity_pb.ts";
import { UserSchema } from "../../gen/svc/v1/users_pb.ts";
import { cutOff } from "../support/idempotency.ts";
import { failNextCall } from "../support/injected-failures.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

/** What a move answered: 200 and the moved object (as JSON), or the error code. */
interface MoveAnswer {
  status: number;
  object: Record<string, unknown> | null;
  code: string | null;
}

interface KycMoveCase {
  name: string;
  /** Submitted first (the move starts from processing). */
  submitted?: boolean;
  to: string;
  /** The kyc.* events of the user once moved. */
  events: string[];
  run: (svc: TestService, sessionId: string, key: string | null) => Promise<MoveAnswer>;
}

async function restMove(svc: TestService, path: string, key: string | null, body: unknown = {}): Promise<MoveAnswer> {
  const response = await svc.request("POST", path, { body, headers: key ? { "idempotency-key": key } : {} });
  return { status: response.status, object: response.status === 200 ? response.body : null, code: response.body?.error?.code ?? null };
}

async function adminMove(call: () => Promise<Record<string, unknown>>): Promise<MoveAnswer> {
  try {
    return { status: 200, object: await call(), code: null };
  } catch (error) {
    const info = ConnectError.from(error).findDetails(ErrorInfoSchema)[0];
    return { status: 0, object: null, code: info?.reason ?? String(error) };
  }
}

const headersOf = (key: string | null) => ({ headers: key ? { "idempotency-key": key } : {} });

function recordDecision(svc: TestService, sessionId: string, key: string | null, decision: "approved" | "rejected") {
  return adminMove(async () => {
    const answer = await svc.admin.recordKycDecision(
      { sessionId, decision, ...(decision === "rejected" ? { reason: "Document expired" } : {}) },
      headersOf(key),
    );
    return toJson(KycSessionSchema, answer.kycSession!, { alwaysEmitImplicit: true }) as Record<string, unknown>;
  });
}

const KYC_CASES: KycMoveCase[] = [
  { name: "sandbox submit", to: "processing", events: [], run: (svc, id, key) => restMove(svc, `/v1/sandbox/kyc-sessions/${id}/submit`, key) },
  {
    name: "sandbox approve",
    to: "approved",
    events: ["kyc.approved"],
    run: (svc, id, key) => restMove(svc, `/v1/sandbox/kyc-sessions/${id}/approve`, key),
  },
  {
    name: "sandbox approve of a submitted session",
    submitted: true,
    to: "approved",
    events: ["kyc.approved"],
    run: (svc, id, key) => restMove(svc, `/v1/sandbox/kyc-sessions/${id}/approve`, key),
  },
  {
    name: "sandbox reject",
    to: "rejected",
    events: ["kyc.rejected"],
    run: (svc, id, key) => restMove(svc, `/v1/sandbox/kyc-sessions/${id}/reject`, key, { reason: "Blurry photo" }),
  },
  { name: "cancel", to: "canceled", events: [], run: (svc, id, key) => restMove(svc, `/v1/kyc-sessions/${id}/cancel`, key) },
  {
    name: "AdminService.RecordKycDecision approved",
    submitted: true,
    to: "approved",
    events: ["kyc.approved"],
    run: (svc, id, key) => recordDecision(svc, id, key, "approved"),
  },
  {
    name: "AdminService.RecordKycDecision rejected",
    to: "rejected",
    events: ["kyc.rejected"],
    run: (svc, id, key) => recordDecision(svc, id, key, "rejected"),
  },
];

describe("KYC and suspension moves with an Idempotency-Key, cut off and retried", function () {
  this.timeout(60_000);
  let svc: TestService;
  let serial = 0;

  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  const newUser = async () => {
    const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    expect(created.status, created.text).to.equal(201);
    return created.body.id as string;
  };

  /** A user with a session requires_input (processing when `submitted`). */
  async function openSession(submitted = false): Promise<{ userId: string; sessionId: string }> {
    const userId = await newUser();
    const session = await svc.request("POST", `/v1/users/${userId}/kyc-sessions`, { body: {} });
    expect(session.status, session.text).to.equal(201);
    if (submitted) expect((await svc.request("POST", `/v1/sandbox/kyc-sessions/${session.body.id}/submit`)).status).to.equal(200);
    return { userId, sessionId: session.body.id as string };
  }

  /** The event log's events of these types about the user, by type, sorted. */
  const eventTypes = async (userId: string, prefix: "kyc." | "user.") => {
    const events = await svc.database.db
      .collection("events")
      .find({ type: { $regex: `^${prefix.replace(".", "\\.")}` }, $or: [{ "data.object.user_id": userId }, { "data.object.id": userId }] })
      .toArray();
    return events
      .map((e) => String(e.type))
      .filter((t) => t !== "user.created")
      .sort();
  };

  const users = () => svc.app.repositories.users;

  for (const move of KYC_CASES) {
    describe(move.name, () => {
      it("cut off after its write: the retry answers the moved session as the first run did, its event once", async () => {
        const { userId, sessionId } = await openSession(move.submitted);
        const key = `kyc-move-cut-${serial++}`;
        const first = await move.run(svc, sessionId, key);
        expect(first.status, JSON.stringify(first)).to.equal(200);
        await cutOff(svc, key);
        const retried = await move.run(svc, sessionId, key);
        expect(retried, "the retry answers what the first run answered").to.deep.equal(first);
        expect(retried.object!.status).to.equal(move.to);
        expect(await eventTypes(userId, "kyc.")).to.deep.equal(move.events);
      });

      it("failed with a 5xx after its write: the retry answers the moved session, its event once", async () => {
        const { userId, sessionId } = await openSession(move.submitted);
        const key = `kyc-move-5xx-after-${serial++}`;
        failNextCall(users(), "update", "after");
        expect((await move.run(svc, sessionId, key)).status).to.not.equal(200);
        const retried = await move.run(svc, sessionId, key);
        expect(retried.status, JSON.stringify(retried)).to.equal(200);
        expect(retried.object).to.include({ id: sessionId, status: move.to });
        expect(await eventTypes(userId, "kyc.")).to.deep.equal(move.events);
      });

      it("cut off before its write: the retry applies the move", async () => {
        const { userId, sessionId } = await openSession(move.submitted);
        const key = `kyc-move-5xx-before-${serial++}`;
        failNextCall(users(), "update", "before");
        expect((await move.run(svc, sessionId, key)).status).to.not.equal(200);
        expect((await svc.request("GET", `/v1/kyc-sessions/${sessionId}`)).body.status).to.equal(move.submitted ? "processing" : "requires_input");
        const retried = await move.run(svc, sessionId, key);
        expect(retried.status, JSON.stringify(retried)).to.equal(200);
        expect(retried.object!.status).to.equal(move.to);
        expect(await eventTypes(userId, "kyc.")).to.deep.equal(move.events);
      });

      for (const other of ["another key", "no key"] as const) {
        it(`moved by ${other} while the run was cut off before its write: the retry is 409 invalid_state`, async () => {
          const { userId, sessionId } = await openSession(move.submitted);
          const key = `kyc-move-other-${serial++}`;
          failNextCall(users(), "update", "before");
          expect((await move.run(svc, sessionId, key)).status).to.not.equal(200);
          const elsewhere = await move.run(svc, sessionId, other === "no key" ? null : `kyc-move-elsewhere-${serial++}`);
          expect(elsewhere.status, JSON.stringify(elsewhere)).to.equal(200);
          const retried = await move.run(svc, sessionId, key);
          expect(retried.code, JSON.stringify(retried)).to.equal("invalid_state");
          expect(await eventTypes(userId, "kyc.")).to.deep.equal(move.events);
        });
      }
    });
  }

  it("a submit cut off after its write, retried once another key approved the session, answers the session as it is now", async () => {
    const { userId, sessionId } = await openSession();
    const submitted = await restMove(svc, `/v1/sandbox/kyc-sessions/${sessionId}/submit`, "kyc-submit-then-approved");
    expect(submitted.status).to.equal(200);
    await cutOff(svc, "kyc-submit-then-approved");
    const approved = await restMove(svc, `/v1/sandbox/kyc-sessions/${sessionId}/approve`, "kyc-approve-after-submit");
    expect(approved.status).to.equal(200);
    const retried = await restMove(svc, `/v1/sandbox/kyc-sessions/${sessionId}/submit`, "kyc-submit-then-approved");
    expect(retried).to.deep.equal(approved);
    expect(await eventTypes(userId, "kyc.")).to.deep.equal(["kyc.approved"]);
  });

  describe("AdminService.SuspendUser and UnsuspendUser", () => {
    const change = (userId: string, suspend: boolean, key: string | null) =>
      adminMove(async () => {
        const request = { projectId: svc.projectId, livemode: false, userId };
        const answer = suspend ? await svc.admin.suspendUser(request, headersOf(key)) : await svc.admin.unsuspendUser(request, headersOf(key));
        return toJson(UserSchema, answer.user!, { alwaysEmitImplicit: true }) as Record<string, unknown>;
      });

    for (const suspend of [true, false]) {
      const name = suspend ? "SuspendUser" : "UnsuspendUser";
      const event = suspend ? "user.suspended" : "user.unsuspended";
      /** A user to change: unsuspended for SuspendUser, suspended (its user.suspended logged) for UnsuspendUser. */
      const userToChange = async () => {
        const userId = await newUser();
        if (!suspend) expect((await change(userId, true, null)).status).to.equal(200);
        return userId;
      };
      const before = suspend ? [] : ["user.suspended"];

      it(`${name} cut off after its write: the retry answers the user as the first run did, ${event} once`, async () => {
        const userId = await userToChange();
        const key = `suspension-cut-${serial++}`;
        const first = await change(userId, suspend, key);
        expect(first.status, JSON.stringify(first)).to.equal(200);
        await cutOff(svc, key);
        const retried = await change(userId, suspend, key);
        expect(retried).to.deep.equal(first);
        expect(retried.object!.suspended).to.equal(suspend);
        expect(await eventTypes(userId, "user.")).to.deep.equal([...before, event].sort());
      });

      it(`${name} failed with a 5xx after its write: the retry answers the changed user, ${event} once`, async () => {
        const userId = await userToChange();
        const key = `suspension-5xx-after-${serial++}`;
        failNextCall(users(), "update", "after");
        expect((await change(userId, suspend, key)).status).to.not.equal(200);
        const retried = await change(userId, suspend, key);
        expect(retried.status, JSON.stringify(retried)).to.equal(200);
        expect(retried.object!.suspended).to.equal(suspend);
        expect(await eventTypes(userId, "user.")).to.deep.equal([...before, event].sort());
      });

      it(`${name} cut off before its write: the retry applies it`, async () => {
        const userId = await userToChange();
        const key = `suspension-5xx-before-${serial++}`;
        failNextCall(users(), "update", "before");
        expect((await change(userId, suspend, key)).status).to.not.equal(200);
        const retried = await change(userId, suspend, key);
        expect(retried.object!.suspended).to.equal(suspend);
        expect(await eventTypes(userId, "user.")).to.deep.equal([...before, event].sort());
      });

      it(`${name} cut off after its write and changed back since: the retry answers the user as it is, changing nothing`, async () => {
        const userId = await userToChange();
        const key = `suspension-back-${serial++}`;
        expect((await change(userId, suspend, key)).status).to.equal(200);
        await cutOff(svc, key);
        const back = await change(userId, !suspend, null);
        expect(back.status).to.equal(200);
        const retried = await change(userId, suspend, key);
        expect(retried).to.deep.equal(back);
        const expected = suspend ? ["user.suspended", "user.unsuspended"] : ["user.suspended", "user.suspended", "user.unsuspended"];
        expect(await eventTypes(userId, "user.")).to.deep.equal(expected);
      });
    }

    it("keeps the stamps of the newest changes only", async () => {
      const userId = await newUser();
      for (let i = 0; i < 12; i++) expect((await change(userId, i % 2 === 0, `suspension-many-${userId}-${i}`)).status).to.equal(200);
      const stored = await svc.database.db.collection<{ _id: string; suspension_moved_by?: string[] }>("users").findOne({ _id: userId });
      expect(stored!.suspension_moved_by).to.have.length(10);
    });
  });
});
