// Each index of the request log answers the list's query of the filter it was made for (the first page: the
// filter, newest first, one more than the limit), shown by explain as on mongod: every index costs every recorded
// call its maintenance, so none is kept that no filter uses. `method`, `source` and a success's status have no
// index of their own and are applied over the tenant's index in time order.
import { expect } from "chai";
import type { Document } from "mongodb";
import { ERROR_CATALOGUE } from "../../src/domain/errors.ts";
import { statusFilter } from "../../src/domain/request-logs.ts";
import type { Database } from "../../src/store/database.ts";
import {
  REFUSED_FROM_STATUS,
  type RequestLogDocument,
  type RequestLogFilters,
  RequestLogRepository,
  requestLogFilter,
} from "../../src/store/request-log-repository.ts";
import { freshDatabase } from "../support/database.ts";
import { indexScans } from "../support/index-scans.ts";

const scope = { projectId: "proj_indexes", livemode: false };
const LIMIT = 10;
const ROUTES = ["/v1/users/{id}", "/v1/users", "/v1/transactions", "/v1/webhook-endpoints"];

/**
 * 800 calls of the tenant (one in ten refused, one in four with an Idempotency-Key) and 200 of another project, whose
 * Idempotency-Keys are the tenant's own (a key is the client's choice, unique to nobody).
 */
function logs(): RequestLogDocument[] {
  const start = Date.UTC(2026, 10, 1);
  return Array.from({ length: 1000 }, (_, i) => {
    const refused = i % 10 === 3;
    const route = ROUTES[i % ROUTES.length]!;
    return {
      _id: `req_index_${String(i).padStart(4, "0")}`,
      project_id: i < 800 ? scope.projectId : "proj_other",
      livemode: false,
      method: route === "/v1/users/{id}" ? "GET" : "POST",
      path: route.replace("{id}", "usr_1"),
      route,
      status: refused ? 404 : 200,
      error_code: refused ? "resource_missing" : null,
      idempotency_key: i % 4 === 1 ? `key-${i % 800}` : null,
      idempotent_replayed: false,
      api_key_id: "key_indexes",
      source: i % 3 === 0 ? "connect" : "rest",
      duration_ms: 3,
      created_at: new Date(start + i * 1000),
    };
  });
}

describe("request log indexes", () => {
  let database: Database;

  before(async () => {
    database = await freshDatabase("request_log_indexes");
    const repository = new RequestLogRepository(database.db);
    await repository.ensureIndexes();
    await repository.insertMany(logs());
  });
  after(async () => {
    await database.close();
  });

  /** The plan of the list's first page, or with `before`, of the page of entries older than that time. */
  async function plan(filters: RequestLogFilters, before?: Date): Promise<{ indexes: string[]; docsExamined: number; returned: number }> {
    const filter = requestLogFilter(scope, filters);
    const explained = (await database.db
      .collection<RequestLogDocument>("request_logs")
      .find(before ? { $and: [filter, { created_at: { $lt: before } }] } : filter)
      .sort({ created_at: -1, _id: -1 })
      .limit(LIMIT + 1)
      .explain("executionStats")) as Document;
    return {
      indexes: indexScans(explained.queryPlanner.winningPlan),
      docsExamined: explained.executionStats.totalDocsExamined,
      returned: explained.executionStats.nReturned,
    };
  }

  // The filter, the index that answers it, and how many entries it reads per entry it returns at most: one for
  // an index of the filter; for a filter applied over the tenant's index, one over the share of entries
  // that pass (a quarter of the calls are GETs, a third came through Connect).
  const cases: [string, RequestLogFilters, string, number][] = [
    ["no filter", {}, "tenant_by_time", 1],
    ["a refusal's status", { status: statusFilter("404") }, "tenant_refused_status_by_time", 1],
    ["a success's status (no index of its own)", { status: statusFilter("200") }, "tenant_by_time", 2],
    ["a route", { route: "/v1/transactions" }, "tenant_route_by_time", 1],
    ["an error code", { error_code: "resource_missing" }, "tenant_error_code_by_time", 1],
    ["an Idempotency-Key", { idempotency_key: "key-401" }, "idempotency_key_tenant_by_time", 1],
    ["a method (no index of its own)", { method: "GET" }, "tenant_by_time", 4],
    ["a source (no index of its own)", { source: "connect" }, "tenant_by_time", 3],
  ];
  for (const [name, filters, index, readsPerEntry] of cases) {
    it(`answers the list filtered by ${name} from ${index}, reading at most ${readsPerEntry} entries per entry returned`, async () => {
      const found = await plan(filters);
      expect(found.indexes).to.deep.equal([index]);
      expect(found.returned).to.be.above(0);
      expect(found.docsExamined).to.be.at.most(found.returned * readsPerEntry);
    });
  }

  // A class of statuses is a range: the status index would hand its entries over in status order, to be sorted
  // whole, so the tenant's index is read instead (backward), past the entries of other classes (nine in ten here).
  it("answers the list filtered by a class of statuses (4xx) from tenant_by_time, reading at most 10 entries per entry returned", async () => {
    const found = await plan({ status: statusFilter("4xx") });
    expect(found.indexes).to.deep.equal(["tenant_by_time"]);
    expect(found.returned).to.equal(LIMIT + 1);
    expect(found.docsExamined).to.be.at.most(found.returned * 10);
  });

  it("answers a later page of a refusal's status from tenant_refused_status_by_time too", async () => {
    const found = await plan({ status: statusFilter("404") }, new Date(Date.UTC(2026, 10, 1) + 400_000));
    expect(found.indexes).to.deep.equal(["tenant_refused_status_by_time"]);
    expect(found.returned).to.equal(LIMIT + 1);
    expect(found.docsExamined).to.equal(found.returned);
  });

  // The refused-status index holds the entries with an error code; a status filter from 400 up is answered from
  // it because every such status is a refusal's, which this keeps true of the catalogue.
  it("has no error of the catalogue answered with a status below the refusals' (every refusal has an error code)", () => {
    for (const [code, definition] of Object.entries(ERROR_CATALOGUE)) expect(definition.status, code).to.be.at.least(REFUSED_FROM_STATUS);
  });

  it("lists the same entries for a refusal's status as a scan of the collection would", async () => {
    const repository = new RequestLogRepository(database.db);
    const first = await repository.list(scope, { limit: 50, after: null }, { status: statusFilter("404") });
    const second = await repository.list(scope, { limit: 50, after: first.items.at(-1)! }, { status: statusFilter("404") });
    const refused = logs().filter((log) => log.project_id === scope.projectId && log.status === 404);
    expect(refused).to.have.length(80);
    expect([...first.items, ...second.items].map((log) => log._id)).to.deep.equal(refused.map((log) => log._id).reverse());
    expect(second.hasMore).to.equal(false);
  });

  it("inserts a batch written before (a lost acknowledgement) once: its new entries are inserted and heard, the others skipped", async () => {
    const repository = new RequestLogRepository(database.db);
    const heard: string[] = [];
    repository.onInserted((inserted) => heard.push(...inserted.map((log) => log._id)));
    const [written, ...rest] = logs()
      .slice(0, 3)
      .map((log) => ({ ...log, _id: `req_again_${log._id}`, project_id: "proj_again" }));
    await repository.insertMany([written!]);
    await repository.insertMany([written!, ...rest]);
    expect(heard).to.deep.equal([written!._id, ...rest.map((log) => log._id)]);
    const stored = await database.db.collection("request_logs").countDocuments({ project_id: "proj_again" });
    expect(stored).to.equal(3);
  });

  it("lists a tenant's entries of an Idempotency-Key alone, never another project's with the same key", async () => {
    const repository = new RequestLogRepository(database.db);
    const page = await repository.list(scope, { limit: 10, after: null }, { idempotency_key: "key-1" });
    expect(page.items.map((log) => log._id)).to.deep.equal(["req_index_0001"]);
    const other = await repository.list({ projectId: "proj_other", livemode: false }, { limit: 10, after: null }, { idempotency_key: "key-1" });
    expect(other.items.map((log) => log._id)).to.deep.equal(["req_index_0801"]);
    expect((await repository.list({ ...scope, livemode: true }, { limit: 10, after: null }, { idempotency_key: "key-1" })).items).to.deep.equal([]);
  });

  it("replaces the indexes that earlier versions made (every call's status; time and id descending; the key's led by the tenant)", async () => {
    const earlier = await freshDatabase("request_log_indexes_earlier");
    try {
      const collection = earlier.db.collection("request_logs");
      await collection.createIndex({ project_id: 1, livemode: 1, status: 1, created_at: -1, _id: -1 }, { name: "tenant_status" });
      await collection.createIndex({ project_id: 1, livemode: 1, created_at: -1, _id: -1 }, { name: "tenant_newest_first" });
      await collection.createIndex({ project_id: 1, livemode: 1, route: 1, created_at: -1, _id: -1 }, { name: "tenant_route" });
      await collection.createIndex(
        { project_id: 1, livemode: 1, idempotency_key: 1, created_at: 1, _id: 1 },
        { name: "tenant_idempotency_key_by_time", partialFilterExpression: { idempotency_key: { $type: "string" } } },
      );
      await new RequestLogRepository(earlier.db).ensureIndexes();
      await new RequestLogRepository(earlier.db).ensureIndexes();
      const names = (await collection.indexes()).map((index) => index.name).sort();
      expect(names).to.deep.equal([
        "_id_",
        "idempotency_key_tenant_by_time",
        "retention",
        "tenant_by_time",
        "tenant_error_code_by_time",
        "tenant_refused_status_by_time",
        "tenant_route_by_time",
      ]);
    } finally {
      await earlier.close();
    }
  });
});
