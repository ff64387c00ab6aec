// Rate limits are counted in the database, so the quota of a key holds across service instances
// (docs/contract.md, Rate limits: fixed 60 s windows per key, 429 rate_limit_exceeded with Retry-After).
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { createKey } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

// 30 s into a window, on both instances, so a window boundary cannot fall inside the test; a day ahead of the real
// time, so that the windows' documents (which expire with their window) are not removed by the database's TTL sweep
// while a test counts on them, as they were at a fixed date in the past, now and then.
const NOW = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 24 * 60 * 60_000 + 30_000);
const clock = () => NOW;

describe("rate limits across two instances sharing one database", () => {
  let first: TestService;
  let second: TestService;
  before(async () => {
    first = await startTestService({ clock, env: { SVC_RATE_LIMIT: "5" } });
    // The second instance adopts the Default organization and project the first bootstrapped.
    second = await startTestService({ clock, databaseUri: first.databaseUri, env: { SVC_RATE_LIMIT: "5" } });
  });
  after(async () => {
    await second.stop();
    await first.stop();
  });

  it("lets exactly the quota through, alternating instances, then answers 429 with Retry-After on both", async () => {
    const { secret } = await createKey(first, first.projectId, { rateLimit: 4 });
    const instances = [first, second];
    const remaining: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await instances[i % 2]!.request("GET", "/v1/events", { key: secret });
      expect(response.status, `request ${i + 1}`).to.equal(200);
      expect(response.headers.get("x-ratelimit-limit")).to.equal("4");
      remaining.push(response.headers.get("x-ratelimit-remaining")!);
    }
    expect(remaining).to.deep.equal(["3", "2", "1", "0"]);

    for (const instance of instances) {
      const refused = await instance.request("GET", "/v1/events", { key: secret });
      expectError(refused, 429, "rate_limit_error", "rate_limit_exceeded");
      // 30 s left in the window: whole seconds, at least 1, equal to the reset header.
      expect(refused.headers.get("retry-after")).to.equal("30");
      expect(refused.headers.get("x-ratelimit-reset")).to.equal("30");
      expect(refused.headers.get("x-ratelimit-remaining")).to.equal("0");
    }
  });

  it("lets exactly the quota through when requests race on both instances at once", async () => {
    const { secret } = await createKey(first, first.projectId, { rateLimit: 6 });
    // The first requests of a window race to create its counter; none may be lost.
    const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => [first, second][i % 2]!.request("GET", "/v1/events", { key: secret })));
    const statuses = responses.map((r) => r.status).sort();
    expect(
      statuses.filter((s) => s === 200),
      statuses.join(","),
    ).to.have.length(6);
    expect(statuses.filter((s) => s === 429)).to.have.length(10);
  });

  it("gives keys without a quota of their own the SVC_RATE_LIMIT default, each key its own count", async () => {
    const a = await createKey(first, first.projectId);
    const b = await createKey(second, first.projectId);
    for (let i = 0; i < 5; i++) {
      expect((await first.request("GET", "/v1/events", { key: a.secret })).status).to.equal(200);
    }
    expectError(await second.request("GET", "/v1/events", { key: a.secret }), 429, "rate_limit_error", "rate_limit_exceeded");
    const other = await second.request("GET", "/v1/events", { key: b.secret });
    expect(other.status).to.equal(200);
    expect(other.headers.get("x-ratelimit-limit")).to.equal("5");
    expect(other.headers.get("x-ratelimit-remaining")).to.equal("4");
  });

  it("renews the quota when the next window starts", async () => {
    let now = NOW.getTime();
    const moving = await startTestService({ clock: () => new Date(now), databaseUri: first.databaseUri, env: { SVC_RATE_LIMIT: "5" } });
    try {
      const { secret } = await createKey(moving, first.projectId, { rateLimit: 1 });
      expect((await moving.request("GET", "/v1/events", { key: secret })).status).to.equal(200);
      expect((await moving.request("GET", "/v1/events", { key: secret })).status).to.equal(429);
      now += 30_000;
      const renewed = await moving.request("GET", "/v1/events", { key: secret });
      expect(renewed.status).to.equal(200);
      expect(renewed.headers.get("x-ratelimit-reset")).to.equal("60");
    } finally {
      await moving.stop();
    }
  });
});
