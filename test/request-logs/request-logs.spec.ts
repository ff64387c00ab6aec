// The request log through the API: every door's call (REST, Connect, gRPC, the dashboard) found by the request id
// its answer carries, refusals included; the list's filters and their refusals; tenant isolation; the 30-day
// TTL index; and recording that never fails or holds up the call it records.
import http2 from "node:http2";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { DashboardClient } from "../dashboard/support.ts";
import { capturedLogLines } from "../support/log-capture.ts";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey, createOtherProject } from "../support/tenancy.ts";
import { startTestService, type RestResponse, type TestService } from "../support/test-service.ts";

const UNKNOWN_USER = "999999999";

describe("request logs", function () {
  this.timeout(30_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
  });

  after(async () => {
    await svc?.stop();
  });

  /** The log of a request id, once written (logs are written in batches, a moment after the answer). */
  async function logOf(id: string, key = svc.sandboxKey): Promise<RestResponse> {
    return eventually(
      () => svc.request("GET", `/v1/request-logs/${id}`, { key }),
      (r) => r.status !== 404,
    );
  }

  function withKey(key: string): Interceptor {
    return (next) => async (request) => {
      request.header.set("authorization", `Bearer ${key}`);
      return next(request);
    };
  }

  async function refusedRpc(transport: "connect" | "grpc"): Promise<ConnectError> {
    const client = createClient(
      UsersService,
      transport === "connect"
        ? createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", interceptors: [withKey(svc.sandboxKey)] })
        : createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, interceptors: [withKey(svc.sandboxKey)] }),
    );
    try {
      await client.getUser({ id: UNKNOWN_USER });
    } catch (error) {
      return ConnectError.from(error);
    }
    throw new Error("GetUser of an unknown user succeeded");
  }

  describe("finds the log of a refused call from the request id of its answer", () => {
    it("REST: method, path, route template, status and error code", async () => {
      const refused = await svc.request("GET", `/v1/users/${UNKNOWN_USER}`);
      expect(refused.status).to.equal(404);
      const requestId = refused.headers.get("x-request-id")!;
      const log = await logOf(requestId);
      expect(log.status).to.equal(200);
      const keyId = log.body.api_key_id;
      expect(keyId).to.be.a("string").and.not.equal("");
      expect(log.body).to.deep.include({
        id: requestId,
        object: "request_log",
        method: "GET",
        path: `/v1/users/${UNKNOWN_USER}`,
        route: "/v1/users/{id}",
        status: 404,
        error_code: "user_not_found",
        idempotency_key: null,
        idempotent_replayed: false,
        source: "rest",
        livemode: false,
      });
      expect(log.body.duration_ms).to.be.a("number").and.at.least(0);
      expect(Date.parse(log.body.created_at)).to.be.closeTo(Date.now(), 60_000);
    });

    for (const transport of ["connect", "grpc"] as const) {
      it(`${transport === "connect" ? "Connect" : "gRPC"}: RPC with the procedure as path and route, the code's HTTP status`, async () => {
        const error = await refusedRpc(transport);
        expect(error.code).to.equal(Code.NotFound);
        const requestId = error.metadata.get("x-request-id")!;
        expect(requestId).to.match(/^req_/);
        const log = await logOf(requestId);
        expect(log.body).to.deep.include({
          id: requestId,
          method: "RPC",
          path: "/svc.v1.UsersService/GetUser",
          route: "/svc.v1.UsersService/GetUser",
          status: 404,
          error_code: "user_not_found",
          source: transport,
        });
      });
    }

    it("dashboard: the page's first call under the page's request id", async () => {
      const console = new DashboardClient(svc);
      await console.signIn(svc.sandboxKey);
      const refused = await console.get(`/dashboard/users/${UNKNOWN_USER}`);
      expect(refused.status).to.equal(404);
      const requestId = refused.headers.get("x-request-id")!;
      const log = await logOf(requestId);
      expect(log.body).to.deep.include({
        id: requestId,
        method: "RPC",
        path: "/svc.v1.UsersService/GetUser",
        status: 404,
        error_code: "user_not_found",
        source: "dashboard",
      });
    });

    it("a body refused as invalid JSON, and a path no route has when its key names the project", async () => {
      const badJson = await svc.request("POST", "/v1/users", { rawBody: "{nope" });
      expect(badJson.status).to.equal(400);
      expect((await logOf(badJson.headers.get("x-request-id")!)).body).to.deep.include({
        status: 400,
        error_code: "invalid_json",
        route: "/v1/users",
      });

      const noRoute = await svc.request("GET", "/v1/no-such-route");
      expect(noRoute.status).to.equal(404);
      expect((await logOf(noRoute.headers.get("x-request-id")!)).body).to.deep.include({
        method: "GET",
        path: "/v1/no-such-route",
        route: null,
        status: 404,
        error_code: "route_not_found",
      });
    });

    it("a revoked key's call is in its project's log; a key no project has is in none", async () => {
      const revoked = await createKey(svc, svc.projectId);
      await svc.admin.revokeApiKey({ id: revoked.id });
      const refused = await svc.request("GET", "/v1/events", { key: revoked.secret });
      expect(refused.status).to.equal(401);
      const log = await logOf(refused.headers.get("x-request-id")!);
      expect(log.body).to.deep.include({ status: 401, error_code: "api_key_revoked", api_key_id: revoked.id, route: "/v1/events" });

      const unknown = await svc.request("GET", "/v1/events", { key: `svc_test_${"x".repeat(30)}` });
      expect(unknown.status).to.equal(401);
      // Written by now if it were recorded at all: a later call's log is already there.
      const later = await svc.request("GET", `/v1/users/${UNKNOWN_USER}`);
      await logOf(later.headers.get("x-request-id")!);
      expect((await svc.request("GET", `/v1/request-logs/${unknown.headers.get("x-request-id")}`)).status).to.equal(404);
    });

    it("a method no service has, over Connect and over gRPC, when its key names the project", async () => {
      const connect = await fetch(`${svc.baseUrl}/svc.v1.NoSuchService/Nothing`, {
        method: "POST",
        headers: { authorization: `Bearer ${svc.sandboxKey}`, "content-type": "application/json" },
        body: "{}",
      });
      const connectLog = await logOf(connect.headers.get("x-request-id")!);
      expect(connectLog.body).to.deep.include({
        method: "RPC",
        path: "/svc.v1.NoSuchService/Nothing",
        route: null,
        status: 404,
        error_code: "route_not_found",
        source: "connect",
      });

      const session = http2.connect(`http://${svc.grpcAddress}`);
      try {
        const requestId = await new Promise<string>((resolve, reject) => {
          const call = session.request({
            ":method": "POST",
            ":path": "/svc.v1.NoSuchService/Nothing",
            "content-type": "application/grpc",
            te: "trailers",
            authorization: `Bearer ${svc.sandboxKey}`,
          });
          call.on("response", (headers) => {
            const id = headers["x-request-id"];
            if (typeof id === "string") resolve(id);
          });
          call.on("trailers", (trailers) => resolve(String(trailers["x-request-id"])));
          call.on("error", reject);
          call.end(Buffer.alloc(5));
          call.resume();
        });
        const grpcLog = await logOf(requestId);
        expect(grpcLog.body).to.deep.include({
          method: "RPC",
          path: "/svc.v1.NoSuchService/Nothing",
          route: null,
          status: 404,
          error_code: "route_not_found",
          source: "grpc",
        });
      } finally {
        session.close();
      }
    });

    it("a rate-limited call is in its key's log", async () => {
      const other = await createOtherProject(svc);
      const { apiKey, secret } = await svc.admin.createApiKey({ projectId: other.projectId, livemode: false, rateLimit: 1 });
      expect((await svc.request("GET", "/v1/events", { key: secret })).status).to.equal(200);
      const limited = await svc.request("GET", "/v1/events", { key: secret });
      expect(limited.status).to.equal(429);
      const log = await logOf(limited.headers.get("x-request-id")!, other.sandboxKey);
      expect(log.body).to.deep.include({ status: 429, error_code: "rate_limit_exceeded", api_key_id: apiKey!.id });
    });
  });

  it("records an Idempotency-Key and its replay, which has a request id of its own", async () => {
    const key = crypto.randomUUID();
    const body = { phone: uniquePhone() };
    const first = await svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": key } });
    const again = await svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": key } });
    expect(first.status).to.equal(201);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    const list = await eventually(
      () => svc.request("GET", `/v1/request-logs?idempotency_key=${key}`),
      (r) => r.body.data?.length === 2,
    );
    const [replay, original] = list.body.data;
    expect(original).to.deep.include({ id: first.headers.get("x-request-id"), status: 201, idempotent_replayed: false, idempotency_key: key });
    expect(replay).to.deep.include({ status: 201, idempotent_replayed: true, idempotency_key: key });
    expect(replay.id).to.not.equal(original.id);
  });

  describe("lists with filters", () => {
    let notFoundId: string;
    let start: string;

    before(async () => {
      start = new Date(Date.now() - 1000).toISOString();
      const refused = await svc.request("GET", `/v1/users/${UNKNOWN_USER}`);
      notFoundId = refused.headers.get("x-request-id")!;
      await svc.request("GET", "/v1/events?limit=1");
      await refusedRpc("grpc");
      await logOf(notFoundId);
    });

    it("newest first in the list's shape, each filter applied", async () => {
      const all = await eventually(
        () => svc.request("GET", "/v1/request-logs?limit=100"),
        (r) => r.body.data.some((l: { route: string }) => l.route === "/v1/events"),
      );
      expect(all.body).to.include({ object: "list", url: "/v1/request-logs" });
      const times = all.body.data.map((l: { created_at: string }) => Date.parse(l.created_at));
      expect(times).to.deep.equal([...times].sort((a, b) => b - a));

      const only = async (query: string) => (await svc.request("GET", `/v1/request-logs?limit=100&${query}`)).body.data as any[];
      const fourHundreds = await only("status=4xx");
      expect(fourHundreds.length).to.be.greaterThan(0);
      expect(fourHundreds.every((l) => l.status >= 400 && l.status < 500)).to.equal(true);
      expect(fourHundreds.map((l) => l.id)).to.include(notFoundId);
      expect((await only("status=404")).every((l) => l.status === 404)).to.equal(true);
      expect((await only("status=2xx")).every((l) => l.status >= 200 && l.status < 300)).to.equal(true);
      expect((await only("status=5xx")).length).to.equal(0);
      const notFound = await only("error_code=user_not_found");
      expect(notFound.length).to.be.greaterThan(0);
      expect(notFound.every((l) => l.error_code === "user_not_found")).to.equal(true);
      expect((await only("method=RPC")).every((l) => l.method === "RPC")).to.equal(true);
      const route = await only(`route=${encodeURIComponent("/v1/users/{id}")}`);
      expect(route.map((l) => l.id)).to.include(notFoundId);
      expect(route.every((l) => l.route === "/v1/users/{id}")).to.equal(true);
      const grpc = await only("source=grpc");
      expect(grpc.length).to.be.greaterThan(0);
      expect(grpc.every((l) => l.source === "grpc")).to.equal(true);
      const since = await only(`created[gte]=${encodeURIComponent(start)}&created[lte]=${encodeURIComponent(new Date().toISOString())}`);
      expect(since.map((l) => l.id)).to.include(notFoundId);
      expect(await only("created[lte]=1000000000")).to.deep.equal([]);
    });

    it("pages with starting_after", async () => {
      const first = await svc.request("GET", "/v1/request-logs?limit=1");
      expect(first.body.data).to.have.length(1);
      expect(first.body.has_more).to.equal(true);
      const next = await svc.request("GET", `/v1/request-logs?limit=1&starting_after=${first.body.data[0].id}`);
      expect(next.body.data).to.have.length(1);
      expect(next.body.data[0].id).to.not.equal(first.body.data[0].id);
      const unknown = await svc.request("GET", "/v1/request-logs?starting_after=req_unknown");
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.code).to.equal("invalid_cursor");
    });

    for (const [query, param] of [
      ["status=4x", "status"],
      ["status=600", "status"],
      ["status=abc", "status"],
      ["error_code=no_such_code", "error_code"],
      ["method=get", "method"],
      ["route=v1/users", "route"],
      ["source=cli", "source"],
      ["limit=101", "limit"],
    ] as const) {
      it(`refuses ${query}: 422 validation_error naming ${param}`, async () => {
        const refused = await svc.request("GET", `/v1/request-logs?${query}`);
        expect(refused.status).to.equal(422);
        expect(refused.body.error).to.include({ code: "validation_error", param });
      });
    }
  });

  it("another project's or environment's log is 404 request_log_not_found, and never listed", async () => {
    const refused = await svc.request("GET", `/v1/users/${UNKNOWN_USER}`);
    const id = refused.headers.get("x-request-id")!;
    await logOf(id);
    const other = await createOtherProject(svc);
    for (const key of [svc.liveKey, other.sandboxKey]) {
      const lookup = await svc.request("GET", `/v1/request-logs/${id}`, { key });
      expect(lookup.status).to.equal(404);
      expect(lookup.body.error.code).to.equal("request_log_not_found");
      const list = await svc.request("GET", "/v1/request-logs?limit=100", { key });
      expect(list.body.data.map((l: { id: string }) => l.id)).to.not.include(id);
    }
    const unknown = await svc.request("GET", "/v1/request-logs/req_doesnotexist");
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal("request_log_not_found");
  });

  it("keeps logs 30 days: a TTL index on created_at", async () => {
    const indexes = await svc.database.db.collection("request_logs").indexes();
    const retention = indexes.find((index) => index.name === "retention");
    expect(retention?.key).to.deep.equal({ created_at: 1 });
    expect(retention?.expireAfterSeconds).to.equal(30 * 24 * 60 * 60);
  });

  it("a failing or stalled log write never fails nor delays the call it records, and is reported", async () => {
    const logs = svc.app.repositories.requestLogs;
    const original = logs.insertMany.bind(logs);
    let release: () => void = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    let attempts = 0;
    logs.insertMany = async () => {
      attempts++;
      await stalled;
      throw new Error("injected request log write failure");
    };
    try {
      const started = performance.now();
      for (let i = 0; i < 5; i++) {
        const answer = await svc.request("GET", "/v1/events?limit=1");
        expect(answer.status).to.equal(200);
      }
      expect(performance.now() - started).to.be.below(5_000);
      await eventually(
        async () => attempts,
        (n) => n > 0,
      );
      release();
      await eventually(
        async () => capturedLogLines.some((line) => line.includes('"context":"request log"') && line.includes("injected request log write failure")),
        (found) => found,
      );
    } finally {
      logs.insertMany = original;
    }
    // Recording goes on once writes succeed again.
    const after = await svc.request("GET", `/v1/users/${UNKNOWN_USER}`);
    expect((await logOf(after.headers.get("x-request-id")!)).status).to.equal(200);
  });
});
