// A user's finished KYC sessions beyond the newest ten move out of the user document into the archive, so the
// document stays small however many sessions are opened; every read still sees them as before: retrieval, the
// list (newest first, paged), refusals of moves, and tenant isolation.
import { expect } from "chai";
import { FINISHED_KYC_SESSIONS_KEPT, sessionsToArchive, type StoredKycSession } from "../../src/domain/kyc.ts";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { createOtherProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const SESSIONS = 15;

describe("archived KYC sessions", function () {
  this.timeout(30_000);
  let svc: TestService;
  let now = Date.parse("2026-11-22T08:00:00.000Z");

  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
  });
  after(async () => {
    await svc.stop();
  });

  it("sessionsToArchive picks the finished sessions beyond the newest kept, never an unfinished one", () => {
    const session = (id: string, status: StoredKycSession["status"]) => ({ id, status }) as StoredKycSession;
    const sessions = [
      session("a", "canceled"),
      session("b", "processing"),
      session("c", "expired"),
      session("d", "rejected"),
      session("e", "requires_input"),
    ];
    expect(sessionsToArchive(sessions, 1).map((s) => s.id)).to.deep.equal(["a", "c"]);
    expect(sessionsToArchive(sessions, 3)).to.deep.equal([]);
    expect(sessionsToArchive(sessions, 0).map((s) => s.id)).to.deep.equal(["a", "c", "d"]);
  });

  it("keeps the user document small and answers every session as before", async () => {
    const user = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    expect(user.status, user.text).to.equal(201);
    const userId = user.body.id as string;
    const created: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      now += 1000;
      const session = await svc.request("POST", `/v1/users/${userId}/kyc-sessions`, { body: {} });
      expect(session.status, session.text).to.equal(201);
      created.push(session.body.id);
    }

    // Each creation canceled the one before it and archived what was finished beyond the newest ten before it:
    // the document holds those ten, the one it canceled and itself.
    const stored = await svc.database.db.collection<{ _id: string; kyc_sessions: StoredKycSession[] }>("users").findOne({ _id: userId });
    expect(stored!.kyc_sessions.map((s) => s.id)).to.deep.equal(created.slice(SESSIONS - FINISHED_KYC_SESSIONS_KEPT - 2));
    const archived = await svc.database.db.collection("kyc_session_archive").find({ user_id: userId }).toArray();
    expect(archived.map((a) => a._id).sort()).to.deep.equal(created.slice(0, SESSIONS - FINISHED_KYC_SESSIONS_KEPT - 2).sort());

    const listed: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const page = await svc.request("GET", `/v1/users/${userId}/kyc-sessions?limit=4${cursor ? `&starting_after=${cursor}` : ""}`);
      expect(page.status, page.text).to.equal(200);
      listed.push(...page.body.data.map((s: { id: string }) => s.id));
      if (!page.body.has_more) break;
      cursor = listed.at(-1)!;
    }
    expect(listed, "every session, newest first").to.deep.equal([...created].reverse());
    const newest = await svc.request("GET", `/v1/users/${userId}/kyc-sessions?limit=2&ending_before=${created[1]}`);
    expect(newest.body.data.map((s: { id: string }) => s.id)).to.deep.equal([created[3], created[2]]);

    const oldest = await svc.request("GET", `/v1/kyc-sessions/${created[0]}`);
    expect(oldest.status, oldest.text).to.equal(200);
    expect(oldest.body).to.include({ id: created[0], object: "kyc_session", user_id: userId, status: "canceled", livemode: false });
    expectError(await svc.request("POST", `/v1/kyc-sessions/${created[0]}/cancel`), 409, "invalid_request_error", "invalid_state");
    expectError(await svc.request("POST", `/v1/sandbox/kyc-sessions/${created[0]}/approve`), 409, "invalid_request_error", "invalid_state");

    const other = await createOtherProject(svc);
    expectError(
      await svc.request("GET", `/v1/kyc-sessions/${created[0]}`, { key: other.sandboxKey }),
      404,
      "invalid_request_error",
      "kyc_session_not_found",
    );
    expectError(
      await svc.request("GET", `/v1/kyc-sessions/${created[0]}`, { key: svc.liveKey }),
      404,
      "invalid_request_error",
      "kyc_session_not_found",
    );
  });

  it("prefers the user document's copy when a crash left a session in both places", async () => {
    const user = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    const first = await svc.request("POST", `/v1/users/${user.body.id}/kyc-sessions`, { body: {} });
    // As a crash after the copy and before the user's write would leave it, with a stale status in the copy.
    const stored = await svc.database.db
      .collection<{ _id: string; project_id: string; kyc_sessions: StoredKycSession[] }>("users")
      .findOne({ _id: user.body.id });
    const stale = { ...stored!.kyc_sessions[0], status: "canceled" };
    await svc.database.db
      .collection("kyc_session_archive")
      .insertOne({ _id: first.body.id, user_id: user.body.id, project_id: stored!.project_id, livemode: false, session: stale } as never);
    const fetched = await svc.request("GET", `/v1/kyc-sessions/${first.body.id}`);
    expect(fetched.body.status).to.equal("requires_input");
    const listed = await svc.request("GET", `/v1/users/${user.body.id}/kyc-sessions`);
    expect(listed.body.data.map((s: { id: string; status: string }) => `${s.id}:${s.status}`)).to.deep.equal([`${first.body.id}:requires_input`]);
  });
});
