// Idempotency-Key over REST (docs/contract.md, Idempotency): replay, reuse, concurrent duplicates, invalid keys,
// expiry after 24 hours, and scoping per project and environment.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { expectStandardHeaders } from "../support/headers.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type RestResponse, type TestService } from "../support/test-service.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

function createUser(svc: TestService, idempotencyKey: string, body: object, key?: string): Promise<RestResponse> {
  return svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": idempotencyKey }, ...(key ? { key } : {}) });
}

/** How many users the key's project and environment has, counted by their user.created events. */
async function usersCreated(svc: TestService, key?: string): Promise<number> {
  const events = await svc.request("GET", "/v1/events?type=user.created&limit=100", key ? { key } : {});
  expect(events.status).to.equal(200);
  return events.body.data.length;
}

describe("idempotency keys over REST", () => {
  let now = Date.parse("2026-11-20T09:00:00.000Z");
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
  });
  after(async () => {
    await svc.stop();
  });

  it("replays the first response: same status and body, its X-Request-Id, Idempotent-Replayed: true", async () => {
    const before = await usersCreated(svc);
    const body = { phone: uniquePhone(), email: "replay@example.com" };
    const first = await createUser(svc, "replay-1", body);
    expect(first.status).to.equal(201);
    expect(first.headers.get("idempotent-replayed")).to.equal(null);

    const second = await createUser(svc, "replay-1", body);
    expect(second.status).to.equal(201);
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers.get("x-request-id")).to.equal(first.headers.get("x-request-id"));
    expect(second.headers.get("idempotent-replayed")).to.equal("true");
    expectStandardHeaders(second.headers, "replay");
    expect(await usersCreated(svc)).to.equal(before + 1);
  });

  it("treats a body with its keys in another order as the same request", async () => {
    const phone = uniquePhone();
    const first = await createUser(svc, "order-1", { phone, external_id: "ext-order-1" });
    const second = await createUser(svc, "order-1", { external_id: "ext-order-1", phone });
    expect(second.headers.get("idempotent-replayed")).to.equal("true");
    expect(second.body).to.deep.equal(first.body);
  });

  it("stores nothing for a request refused by validation: the corrected retry with the same key runs", async () => {
    const first = await createUser(svc, "error-1", { phone: "not a phone" });
    expectError(first, 422, "invalid_request_error", "validation_error", "phone");
    const corrected = await createUser(svc, "error-1", { phone: uniquePhone() });
    expect(corrected.status).to.equal(201);
    expect(corrected.headers.get("idempotent-replayed")).to.equal(null);
  });

  it("replays a business rule's 409 with its original request_id", async () => {
    const phone = uniquePhone();
    expect((await createUser(svc, "conflict-0", { phone })).status).to.equal(201);
    const first = await createUser(svc, "conflict-1", { phone });
    expectError(first, 409, "invalid_request_error", "user_already_exists", "phone");
    const second = await createUser(svc, "conflict-1", { phone });
    expect(second.status).to.equal(409);
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers.get("x-request-id")).to.equal(first.body.error.request_id);
    expect(second.headers.get("idempotent-replayed")).to.equal("true");
  });

  it("answers 422 idempotency_key_reuse for the same key with another body, and on another route", async () => {
    const created = await createUser(svc, "reuse-1", { phone: uniquePhone() });
    expect(created.status).to.equal(201);
    expectError(await createUser(svc, "reuse-1", { phone: uniquePhone() }), 422, "idempotency_error", "idempotency_key_reuse");
    const patched = await svc.request("PATCH", `/v1/users/${created.body.id}`, {
      body: { first_name: "Ann" },
      headers: { "idempotency-key": "reuse-1" },
    });
    expectError(patched, 422, "idempotency_error", "idempotency_key_reuse");
  });

  it("runs concurrent duplicates once: the others get 409 idempotency_in_progress or the replay", async () => {
    const before = await usersCreated(svc);
    const body = { phone: uniquePhone() };
    const responses = await Promise.all(Array.from({ length: 10 }, () => createUser(svc, "concurrent-1", body)));
    const executed = responses.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(executed, responses.map((r) => r.status).join(",")).to.have.length(1);
    for (const response of responses) {
      if (response === executed[0]) continue;
      if (response.status === 409) expectError(response, 409, "idempotency_error", "idempotency_in_progress");
      else {
        expect(response.status).to.equal(201);
        expect(response.headers.get("idempotent-replayed")).to.equal("true");
        expect(response.body).to.deep.equal(executed[0]!.body);
      }
    }
    expect(await usersCreated(svc)).to.equal(before + 1);
    // Once the first has finished, the key replays.
    expect((await createUser(svc, "concurrent-1", body)).headers.get("idempotent-replayed")).to.equal("true");
  });

  it("replays for 24 hours, then forgets the key", async () => {
    const body = { phone: uniquePhone() };
    const first = await createUser(svc, "expiry-1", body);
    expect(first.status).to.equal(201);
    now += DAY_MS - 1000;
    const stillReplayed = await createUser(svc, "expiry-1", body);
    expect(stillReplayed.headers.get("idempotent-replayed")).to.equal("true");
    expect(stillReplayed.body).to.deep.equal(first.body);
    now += 2000;
    // Past 24 hours the key is free: another body is no reuse, it runs.
    const fresh = await createUser(svc, "expiry-1", { phone: uniquePhone() });
    expect(fresh.status).to.equal(201);
    expect(fresh.headers.get("idempotent-replayed")).to.equal(null);
    expect(fresh.body.id).not.to.equal(first.body.id);
  });

  it("scopes keys per environment: the same key runs in sandbox and in live", async () => {
    const body = { phone: uniquePhone() };
    const sandbox = await createUser(svc, "scoped-1", body, svc.sandboxKey);
    const live = await createUser(svc, "scoped-1", body, svc.liveKey);
    expect([sandbox.status, live.status]).to.deep.equal([201, 201]);
    expect(live.headers.get("idempotent-replayed")).to.equal(null);
    expect([sandbox.body.livemode, live.body.livemode]).to.deep.equal([false, true]);
  });

  it("scopes keys per project: the same key runs in two projects", async () => {
    const other = await createProject(svc);
    const otherKey = (await createKey(svc, other.projectId)).secret;
    const body = { phone: uniquePhone() };
    const mine = await createUser(svc, "scoped-2", body);
    const theirs = await createUser(svc, "scoped-2", body, otherKey);
    expect([mine.status, theirs.status]).to.deep.equal([201, 201]);
    expect(theirs.headers.get("idempotent-replayed")).to.equal(null);
    expect(theirs.body.id).not.to.equal(mine.body.id);
    expect(await usersCreated(svc, otherKey)).to.equal(1);
  });

  it("shares keys between the keys of one project and environment", async () => {
    const secondKey = (await createKey(svc, svc.projectId)).secret;
    const body = { phone: uniquePhone() };
    const first = await createUser(svc, "shared-1", body);
    const second = await createUser(svc, "shared-1", body, secondKey);
    expect(second.headers.get("idempotent-replayed")).to.equal("true");
    expect(second.body).to.deep.equal(first.body);
  });

  it("accepts a key of 255 visible ASCII characters, the longest allowed", async () => {
    const key = `~!${"k".repeat(253)}`;
    const body = { phone: uniquePhone() };
    expect((await createUser(svc, key, body)).status).to.equal(201);
    expect((await createUser(svc, key, body)).headers.get("idempotent-replayed")).to.equal("true");
  });

  it("ignores Idempotency-Key on reads", async () => {
    const response = await svc.request("GET", "/v1/events", { headers: { "idempotency-key": "" } });
    expect(response.status).to.equal(200);
  });
});
