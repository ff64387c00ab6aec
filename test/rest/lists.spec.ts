// Every list (docs/contract.md, Lists): newest first, `starting_after` forwards, `ending_before` backwards (still
// newest first, `has_more` meaning more before), the two cursors exclusive, and `created[gt|gte|lt|lte]` in unix
// seconds or RFC 3339, over REST and Connect.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("lists: ending_before and created", () => {
  let svc: TestService;
  let key: string;
  /** Newest first, as every list answers. */
  let endpoints: any[] = [];
  let deliveriesPath: string;
  before(async () => {
    svc = await startTestService();
    const { projectId } = await createProject(svc, { organizationId: svc.organizationId });
    key = (await createKey(svc, projectId)).secret;
    const subscriber = await svc.request("POST", "/v1/webhook-endpoints", {
      key,
      body: { url: "https://hooks.example.com/lists-subscriber", event_types: ["user.created"] },
    });
    expect(subscriber.status, subscriber.text).to.equal(201);
    deliveriesPath = `/v1/webhook-endpoints/${subscriber.body.id}/deliveries`;
    endpoints.push(subscriber.body);
    for (let i = 0; i < 4; i++) {
      // Distinct milliseconds, so the creation times alone order them.
      await sleep(3);
      const created = await svc.request("POST", "/v1/webhook-endpoints", { key, body: { url: `https://hooks.example.com/lists-${i}` } });
      expect(created.status, created.text).to.equal(201);
      endpoints.push(created.body);
      const user = await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } });
      expect(user.status, user.text).to.equal(201);
    }
    endpoints = endpoints.reverse();
  });
  after(async () => {
    await svc.stop();
  });

  async function ids(path: string): Promise<{ ids: string[]; hasMore: boolean }> {
    const response = await svc.request("GET", path, { key });
    expect(response.status, response.text).to.equal(200);
    return { ids: response.body.data.map((item: any) => item.id), hasMore: response.body.has_more };
  }

  async function everyId(path: string): Promise<string[]> {
    return (await ids(`${path}?limit=100`)).ids;
  }

  const LISTS = () => ["/v1/webhook-endpoints", "/v1/events", deliveriesPath, "/v1/users"];

  it("ending_before pages backwards through every list, each page newest first", async () => {
    for (const path of LISTS()) {
      const all = await everyId(path);
      expect(all.length, path).to.be.at.least(4);
      // From the oldest item backwards, two at a time, until has_more is false.
      let cursor = all[all.length - 1]!;
      const seen: string[] = [];
      for (;;) {
        const page = await ids(`${path}?limit=2&ending_before=${cursor}`);
        seen.unshift(...page.ids);
        if (!page.hasMore) break;
        cursor = page.ids[0]!;
      }
      expect(seen, path).to.deep.equal(all.slice(0, -1));
      const justNewer = await ids(`${path}?limit=2&ending_before=${all[3]}`);
      expect(justNewer, path).to.deep.equal({ ids: [all[1], all[2]], hasMore: true });
      expect(await ids(`${path}?ending_before=${all[0]}`), path).to.deep.equal({ ids: [], hasMore: false });
    }
  });

  it("refuses starting_after with ending_before (422 naming ending_before) and an unknown ending_before (400 invalid_cursor)", async () => {
    for (const path of LISTS()) {
      const [first] = await everyId(path);
      const both = await svc.request("GET", `${path}?starting_after=${first}&ending_before=${first}`, { key });
      expectError(both, 422, "invalid_request_error", "validation_error", "ending_before");
      expect(both.body.error.message).to.equal("starting_after and ending_before cannot be used together.");
      expectError(await svc.request("GET", `${path}?ending_before=nope`, { key }), 400, "invalid_request_error", "invalid_cursor");
    }
  });

  it("created[gt|gte|lt|lte] bound the creation time, in RFC 3339 or unix seconds", async () => {
    const [newest, second, third] = endpoints;
    const at = (item: any) => encodeURIComponent(item.created_at);
    const path = "/v1/webhook-endpoints?limit=100";
    expect((await ids(`${path}&created[gte]=${at(second)}`)).ids).to.deep.equal([newest.id, second.id]);
    expect((await ids(`${path}&created[gt]=${at(second)}`)).ids).to.deep.equal([newest.id]);
    expect((await ids(`${path}&created[lte]=${at(second)}&created[gt]=${at(endpoints[3])}`)).ids).to.deep.equal([second.id, third.id]);
    expect((await ids(`${path}&created[lt]=${at(endpoints[4])}`)).ids).to.deep.equal([]);
    // Unix seconds: whole seconds around the items.
    const seconds = Math.floor(Date.parse(newest.created_at) / 1000);
    expect((await ids(`${path}&created[lt]=${seconds + 1}&created[gte]=${seconds - 3600}`)).ids).to.include(newest.id);
    expect((await ids(`${path}&created[gt]=${seconds + 1}`)).ids).to.deep.equal([]);
    // Bounds and cursors together.
    expect((await ids(`${path}&created[gte]=${at(third)}&starting_after=${newest.id}`)).ids).to.deep.equal([second.id, third.id]);
    expect((await ids(`/v1/webhook-endpoints?limit=1&created[lte]=${at(second)}&ending_before=${endpoints[4].id}`)).ids).to.deep.equal([
      endpoints[3].id,
    ]);
    // On the other lists too.
    for (const list of ["/v1/events", deliveriesPath, "/v1/users"]) {
      const all = (await svc.request("GET", `${list}?limit=100`, { key })).body.data;
      const middle = all[1];
      const after = (await svc.request("GET", `${list}?limit=100&created[gt]=${encodeURIComponent(middle.created_at)}`, { key })).body.data;
      expect(
        after.every((item: any) => Date.parse(item.created_at) > Date.parse(middle.created_at)),
        list,
      ).to.equal(true);
      expect(
        after.map((item: any) => item.id),
        list,
      ).to.not.include(middle.id);
    }
  });

  it("refuses a created bound that is no time, and created without a bound", async () => {
    for (const path of [...LISTS(), "/v1/users/123456789/wallets", "/v1/users/123456789/kyc-sessions"]) {
      const bad = await svc.request("GET", `${path}?created[gt]=yesterday`, { key });
      expectError(bad, 422, "invalid_request_error", "validation_error", "created[gt]");
      expect(bad.body.error.message).to.equal("created[gt] must be unix seconds or an RFC 3339 date-time with an offset.");
      expectError(
        await svc.request("GET", `${path}?created[gte]=2026-11-20T10:00:00`, { key }),
        422,
        "invalid_request_error",
        "validation_error",
        "created[gte]",
      );
      expectError(await svc.request("GET", `${path}?created[after]=1`, { key }), 422, "invalid_request_error", "validation_error", "created[after]");
      expectError(await svc.request("GET", `${path}?created=1`, { key }), 422, "invalid_request_error", "validation_error", "created");
    }
  });

  it("a user's wallets take the same parameters", async () => {
    const user = await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } });
    const path = `/v1/users/${user.body.id}/wallets`;
    const [wallet] = (await everyId(path)) as [string];
    expect(await ids(`${path}?ending_before=${wallet}`)).to.deep.equal({ ids: [], hasMore: false });
    expect((await ids(`${path}?created[lte]=${Math.floor(Date.now() / 1000) + 60}`)).ids).to.deep.equal([wallet]);
    expect((await ids(`${path}?created[gt]=${Math.floor(Date.now() / 1000) + 60}`)).ids).to.deep.equal([]);
    expectError(
      await svc.request("GET", `${path}?ending_before=${wallet}&starting_after=${wallet}`, { key }),
      422,
      "invalid_request_error",
      "validation_error",
      "ending_before",
    );
    expectError(await svc.request("GET", `${path}?ending_before=wal_nope`, { key }), 400, "invalid_request_error", "invalid_cursor");
  });

  it("over Connect, created is a CreatedFilter message and ending_before a field", async () => {
    const call = (body: object) => svc.request("POST", "/svc.v1.WebhookEndpointsService/ListWebhookEndpoints", { key, body });
    const [newest, second] = endpoints;
    const bounded = await call({ created: { gte: second.created_at }, limit: 10 });
    expect(bounded.status, bounded.text).to.equal(200);
    expect(bounded.body.data.map((e: any) => e.id)).to.deep.equal([newest.id, second.id]);
    const backwards = await call({ ending_before: second.id, limit: 10 });
    expect(backwards.body.data.map((e: any) => e.id)).to.deep.equal([newest.id]);
    const both = await call({ ending_before: second.id, starting_after: second.id });
    expect(both.status).to.equal(400);
    expect(both.body.code).to.equal("invalid_argument");
  });
});
