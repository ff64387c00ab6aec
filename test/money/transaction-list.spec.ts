// GET /v1/users/{id}/transactions takes the list parameters of every list (docs/contract.md, Lists):
// `ending_before` pages backwards (each page newest first, has_more = more newer), exclusive with
// `starting_after`, and `created[gt|gte|lt|lte]` in RFC 3339 or unix seconds, with the type and status filters
// and over Connect.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser } from "./support.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("money: listing a user's transactions with ending_before and created", () => {
  let svc: TestService;
  let user: string;
  let path: string;
  /** Newest first, as the list answers. */
  const all: any[] = [];

  before(async () => {
    svc = await startTestService();
    user = await approvedUser(svc);
    path = `/v1/users/${user}/transactions`;
    for (let i = 0; i < 5; i++) {
      // Distinct milliseconds, so the creation times alone order them; pending for an hour.
      await sleep(3);
      const deposit = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 10 + i, complete_after_seconds: 3600 } });
      expect(deposit.status, deposit.text).to.equal(201);
      all.unshift(deposit.body);
    }
    const listed = await svc.request("GET", `${path}?limit=100`);
    expect(listed.body.data.map((t: any) => t.id)).to.deep.equal(all.map((t) => t.id));
  });
  after(async () => {
    await svc.stop();
  });

  async function ids(query: string): Promise<{ ids: string[]; hasMore: boolean }> {
    const response = await svc.request("GET", `${path}?${query}`);
    expect(response.status, response.text).to.equal(200);
    return { ids: response.body.data.map((t: any) => t.id), hasMore: response.body.has_more };
  }
  const idsOf = (...indexes: number[]) => indexes.map((i) => all[i].id);

  it("pages backwards with ending_before, each page newest first, has_more telling whether newer ones precede", async () => {
    let cursor = all[4].id;
    const seen: string[] = [];
    for (;;) {
      const page = await ids(`limit=2&ending_before=${cursor}`);
      expect(page.ids.length).to.be.at.least(1);
      seen.unshift(...page.ids);
      if (!page.hasMore) break;
      cursor = page.ids[0]!;
    }
    expect(seen).to.deep.equal(idsOf(0, 1, 2, 3));
    expect(await ids(`limit=2&ending_before=${all[3].id}`)).to.deep.equal({ ids: idsOf(1, 2), hasMore: true });
    expect(await ids(`limit=2&ending_before=${all[2].id}`)).to.deep.equal({ ids: idsOf(0, 1), hasMore: false });
    expect(await ids(`ending_before=${all[0].id}`)).to.deep.equal({ ids: [], hasMore: false });
    // Forwards again from the page's last item: the pages meet.
    expect(await ids(`limit=2&starting_after=${all[2].id}`)).to.deep.equal({ ids: idsOf(3, 4), hasMore: false });
  });

  it("bounds the creation time with created[gt|gte|lt|lte], in RFC 3339 or unix seconds, with cursors and filters", async () => {
    const at = (i: number) => encodeURIComponent(all[i].created_at);
    expect((await ids(`created[gte]=${at(1)}`)).ids).to.deep.equal(idsOf(0, 1));
    expect((await ids(`created[gt]=${at(1)}`)).ids).to.deep.equal(idsOf(0));
    expect((await ids(`created[lte]=${at(1)}&created[gt]=${at(3)}`)).ids).to.deep.equal(idsOf(1, 2));
    expect((await ids(`created[lt]=${at(4)}`)).ids).to.deep.equal([]);
    const seconds = Math.floor(Date.parse(all[0].created_at) / 1000);
    expect((await ids(`limit=100&created[lt]=${seconds + 1}&created[gte]=${seconds - 3600}`)).ids).to.include.members(idsOf(0));
    expect((await ids(`created[gt]=${seconds + 1}`)).ids).to.deep.equal([]);
    expect((await ids(`created[gte]=${at(3)}&starting_after=${all[0].id}`)).ids).to.deep.equal(idsOf(1, 2, 3));
    expect(await ids(`limit=1&created[lte]=${at(1)}&ending_before=${all[4].id}`)).to.deep.equal({ ids: idsOf(3), hasMore: true });
    expect((await ids(`created[gte]=${at(2)}&type=deposit&status=pending`)).ids).to.deep.equal(idsOf(0, 1, 2));
    expect((await ids(`created[gte]=${at(2)}&type=withdrawal`)).ids).to.deep.equal([]);
  });

  it("refuses both cursors (422 naming ending_before), an unknown ending_before (400 invalid_cursor) and bad bounds (422 naming them)", async () => {
    const both = await svc.request("GET", `${path}?starting_after=${all[1].id}&ending_before=${all[1].id}`);
    expectError(both, 422, "invalid_request_error", "validation_error", "ending_before");
    expect(both.body.error.message).to.equal("starting_after and ending_before cannot be used together.");
    expectError(await svc.request("GET", `${path}?ending_before=txn_nope`), 400, "invalid_request_error", "invalid_cursor");
    // Another user's transaction is no cursor of this list.
    const other = await approvedUser(svc);
    expectError(
      await svc.request("GET", `/v1/users/${other}/transactions?ending_before=${all[1].id}`),
      400,
      "invalid_request_error",
      "invalid_cursor",
    );
    const bad = await svc.request("GET", `${path}?created[gt]=yesterday`);
    expectError(bad, 422, "invalid_request_error", "validation_error", "created[gt]");
    expect(bad.body.error.message).to.equal("created[gt] must be unix seconds or an RFC 3339 date-time with an offset.");
    expectError(
      await svc.request("GET", `${path}?created[gte]=2026-11-20T10:00:00`),
      422,
      "invalid_request_error",
      "validation_error",
      "created[gte]",
    );
    expectError(await svc.request("GET", `${path}?created[after]=1`), 422, "invalid_request_error", "validation_error", "created[after]");
    expectError(await svc.request("GET", `${path}?created=1`), 422, "invalid_request_error", "validation_error", "created");
    // Validation before the user's lookup: an unknown user with a bad bound is 422, with good ones 404.
    expectError(
      await svc.request("GET", "/v1/users/123456789/transactions?ending_before=a&starting_after=b"),
      422,
      "invalid_request_error",
      "validation_error",
      "ending_before",
    );
    expectError(await svc.request("GET", "/v1/users/123456789/transactions?ending_before=txn_nope"), 404, "invalid_request_error", "user_not_found");
  });

  it("over Connect, created is a CreatedFilter message and ending_before a field", async () => {
    const call = (body: object) => svc.request("POST", "/svc.v1.TransactionsService/ListUserTransactions", { body: { user_id: user, ...body } });
    const bounded = await call({ created: { gte: all[1].created_at }, limit: 10 });
    expect(bounded.status, bounded.text).to.equal(200);
    expect(bounded.body.data.map((t: any) => t.id)).to.deep.equal(idsOf(0, 1));
    const backwards = await call({ ending_before: all[2].id, limit: 10 });
    expect(backwards.body.data.map((t: any) => t.id)).to.deep.equal(idsOf(0, 1));
    expect(backwards.body.has_more ?? false).to.equal(false);
    const both = await call({ ending_before: all[1].id, starting_after: all[1].id });
    expect(both.status).to.equal(400);
    expect(both.body.code).to.equal("invalid_argument");
  });
});
