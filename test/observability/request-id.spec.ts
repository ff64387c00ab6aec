// One request id per call, whatever the transport: every log line the call writes carries it, and the answer
// names it — the `x-request-id` header (REST, Connect), `error.request_id` of a REST error, and for gRPC the
// response headers and the trailers of a success as of an error.
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { createClient, ConnectError, Code, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { capturedLogLines } from "../support/log-capture.ts";
import { uniquePhone } from "../support/phones.ts";
import { rememberSensitive } from "../support/sensitive-values.ts";
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from "../support/test-service.ts";

const REQUEST_ID = /^req_[A-Za-z0-9]{24}$/;

interface LogLine {
  request_id?: string;
  msg: string;
  [field: string]: unknown;
}

/**
 * Runs `action` and answers its result with the log lines written meanwhile. Fastify writes its
 * "request completed" line once the response is sent, so the lines are read after it has settled.
 */
async function withLogLines<T>(action: () => Promise<T>, expectedMessages: string[]): Promise<{ result: T; lines: LogLine[] }> {
  const start = capturedLogLines.length;
  const result = await action();
  const deadline = Date.now() + 2000;
  let lines: LogLine[] = [];
  for (;;) {
    lines = capturedLogLines.slice(start).map((line) => JSON.parse(line) as LogLine);
    const seen = lines.map((line) => line.msg);
    if (expectedMessages.every((msg) => seen.includes(msg)) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { result, lines };
}

/** Every line of the call carries one request id, this one; the lines expected are there. */
function expectOneRequestId(lines: LogLine[], requestId: string | null | undefined, expectedMessages: string[]): void {
  expect(requestId, "request id of the answer").to.match(REQUEST_ID);
  const summary = JSON.stringify(lines.map((line) => ({ msg: line.msg, request_id: line.request_id })));
  expect(
    lines.map((line) => line.msg),
    summary,
  ).to.include.members(expectedMessages);
  for (const line of lines) expect(line.request_id, `request_id of "${line.msg}" in ${summary}`).to.equal(requestId);
}

/** grpc-js clients built from the .proto files, as an integrator would build them. */
function grpcClients(address: string) {
  const definition = protoLoader.loadSync(["svc/v1/users.proto", "svc/admin/v1/admin.proto"], {
    includeDirs: [fileURLToPath(new URL("../../proto", import.meta.url))],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const svc = (grpc.loadPackageDefinition(definition) as any).svc;
  return {
    users: new svc.v1.UsersService(address, grpc.credentials.createInsecure()) as grpc.Client,
    admin: new svc.admin.v1.AdminService(address, grpc.credentials.createInsecure()) as grpc.Client,
  };
}

interface GrpcOutcome {
  error: grpc.ServiceError | null;
  message: any;
  header: grpc.Metadata;
  trailer: grpc.Metadata;
}

/** One unary call; resolves once the status (and so the trailers) has arrived. */
function grpcCall(client: grpc.Client, method: string, request: object, metadata: Record<string, string>): Promise<GrpcOutcome> {
  const md = new grpc.Metadata();
  for (const [name, value] of Object.entries(metadata)) md.set(name, value);
  return new Promise((resolve) => {
    let header = new grpc.Metadata();
    let reply: { error: grpc.ServiceError | null; message: any } | null = null;
    let trailer: grpc.Metadata | null = null;
    const done = () => {
      if (reply && trailer) resolve({ ...reply, header, trailer });
    };
    const call = (client as any)[method](request, md, (error: grpc.ServiceError | null, message: any) => {
      reply = { error, message };
      done();
    });
    call.on("metadata", (m: grpc.Metadata) => {
      header = m;
    });
    call.on("status", (status: grpc.StatusObject) => {
      trailer = status.metadata;
      done();
    });
  });
}

function single(metadata: grpc.Metadata, name: string): string | undefined {
  const values = metadata.get(name).map(String);
  expect(values.length, `${name} values: ${JSON.stringify(values)}`).to.be.at.most(1);
  return values[0];
}

describe("one request id per call", () => {
  let svc: TestService;
  let connectUsers: Client<typeof UsersService>;
  let clients: ReturnType<typeof grpcClients>;
  let userId: string;

  before(async () => {
    svc = await startTestService();
    connectUsers = createClient(UsersService, createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1" }));
    clients = grpcClients(svc.grpcAddress);
    const phone = uniquePhone();
    rememberSensitive(phone);
    const created = await svc.request("POST", "/v1/users", { body: { phone } });
    expect(created.status).to.equal(201);
    userId = created.body.id;
  });

  after(async () => {
    clients.users.close();
    clients.admin.close();
    await svc.stop();
  });

  describe("REST", () => {
    it("a success: the log lines and x-request-id", async () => {
      const { result, lines } = await withLogLines(() => svc.request("GET", `/v1/users/${userId}`), ["request completed"]);
      expect(result.status).to.equal(200);
      const requestId = result.headers.get("x-request-id");
      expectOneRequestId(lines, requestId, ["request completed"]);
      expect(lines.find((line) => line.msg === "request completed")).to.include({ status: 200, route: "/v1/users/:id", method: "GET" });
    });

    it("a creation with an Idempotency-Key: one id for the request line, the header and the stored answer", async () => {
      const phone = uniquePhone();
      rememberSensitive(phone);
      const key = `rid-${Date.now()}`;
      const { result, lines } = await withLogLines(
        () => svc.request("POST", "/v1/users", { body: { phone }, headers: { "idempotency-key": key } }),
        ["request completed"],
      );
      expect(result.status).to.equal(201);
      const requestId = result.headers.get("x-request-id");
      expectOneRequestId(lines, requestId, ["request completed"]);
      // The replay answers with the original call's id.
      const replay = await svc.request("POST", "/v1/users", { body: { phone }, headers: { "idempotency-key": key } });
      expect(replay.headers.get("idempotent-replayed")).to.equal("true");
      expect(replay.headers.get("x-request-id")).to.equal(requestId);
    });

    for (const [label, path, key, status, code] of [
      ["a 404 of the method", "/v1/users/100000001", undefined, 404, "user_not_found"],
      ["a 401 of admission", "/v1/users/100000001", null, 401, "missing_api_key"],
      ["a 422 of the decoder", "/v1/events?limit=abc", undefined, 422, "validation_error"],
      ["a 404 with no route", "/v1/nowhere", undefined, 404, "route_not_found"],
    ] as const) {
      it(`${label}: the log lines, x-request-id and error.request_id`, async () => {
        const { result, lines } = await withLogLines(() => svc.request("GET", path, key === null ? { key: null } : {}), ["request completed"]);
        expect(result.status, result.text).to.equal(status);
        expect(result.body.error.code).to.equal(code);
        const requestId = result.headers.get("x-request-id");
        expect(result.body.error.request_id).to.equal(requestId);
        expectOneRequestId(lines, requestId, ["request completed"]);
        expect(lines.find((line) => line.msg === "request completed")).to.include({ status });
      });
    }
  });

  describe("Connect over HTTP/1.1", () => {
    it("a success: the request line, the rpc line and x-request-id", async () => {
      let header: Headers | null = null;
      const { result, lines } = await withLogLines(
        () => connectUsers.getUser({ id: userId }, { headers: { authorization: `Bearer ${svc.sandboxKey}` }, onHeader: (h) => (header = h) }),
        ["request completed", "rpc call"],
      );
      expect(result.user?.id).to.equal(userId);
      const requestId = header!.get("x-request-id");
      expectOneRequestId(lines, requestId, ["request completed", "rpc call"]);
      expect(lines.find((line) => line.msg === "rpc call")).to.include({ procedure: "svc.v1.UsersService/GetUser", protocol: "connect", code: "ok" });
    });

    it("an error: the log lines and the error's x-request-id", async () => {
      const { result: error, lines } = await withLogLines(
        () =>
          connectUsers.getUser({ id: "100000001" }, { headers: { authorization: `Bearer ${svc.sandboxKey}` } }).then(
            () => expect.fail("GetUser of an unknown user succeeded"),
            (e: unknown) => ConnectError.from(e),
          ),
        ["request completed", "rpc call"],
      );
      expect(Code[error.code]).to.equal("NotFound");
      const requestId = error.metadata.get("x-request-id");
      expectOneRequestId(lines, requestId, ["request completed", "rpc call"]);
      expect(lines.find((line) => line.msg === "rpc call")).to.include({ code: "not_found" });
      expect(lines.find((line) => line.msg === "request completed")).to.include({ status: 404 });
    });

    it("a raw Connect JSON POST refused at admission: the header names the id of the log lines", async () => {
      const { result, lines } = await withLogLines(
        () =>
          fetch(`${svc.baseUrl}/svc.v1.UsersService/GetUser`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer svc_test_malformed" },
            body: JSON.stringify({ id: userId }),
          }),
        ["request completed", "rpc call"],
      );
      expect(result.status).to.equal(401);
      const body = (await result.json()) as { code: string };
      expect(body.code).to.equal("unauthenticated");
      expectOneRequestId(lines, result.headers.get("x-request-id"), ["request completed", "rpc call"]);
      expect(result.headers.get("x-ratelimit-limit")).to.match(/^\d+$/);
    });
  });

  describe("gRPC-Web over HTTP/1.1", () => {
    let webUsers: Client<typeof UsersService>;
    before(() => {
      webUsers = createClient(UsersService, createGrpcWebTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1" }));
    });

    it("a success: the same id in the headers, the trailers and the log lines", async () => {
      let header: Headers | null = null;
      let trailer: Headers | null = null;
      const { lines } = await withLogLines(
        () =>
          webUsers.getUser(
            { id: userId },
            { headers: { authorization: `Bearer ${svc.sandboxKey}` }, onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
          ),
        ["request completed", "rpc call"],
      );
      const requestId = header!.get("x-request-id");
      expect(trailer!.get("x-request-id")).to.equal(requestId);
      expectOneRequestId(lines, requestId, ["request completed", "rpc call"]);
      expect(lines.find((line) => line.msg === "rpc call")).to.include({ protocol: "grpc-web", code: "ok" });
    });

    it("an error: headers and trailers (merged by the client) name the id of the log lines", async () => {
      const { result: error, lines } = await withLogLines(
        () =>
          webUsers.getUser({ id: "100000001" }, { headers: { authorization: `Bearer ${svc.sandboxKey}` } }).then(
            () => expect.fail("GetUser of an unknown user succeeded"),
            (e: unknown) => ConnectError.from(e),
          ),
        ["request completed", "rpc call"],
      );
      expect(Code[error.code]).to.equal("NotFound");
      // The id travels in the response headers and again in the trailers; the client joins both.
      const ids = [...new Set(error.metadata.get("x-request-id")!.split(", "))];
      expect(ids).to.have.length(1);
      expectOneRequestId(lines, ids[0], ["request completed", "rpc call"]);
    });
  });

  describe("gRPC", () => {
    it("a success: the rpc line, x-request-id in the headers and in the trailers", async () => {
      const { result, lines } = await withLogLines(
        () => grpcCall(clients.users, "GetUser", { id: userId }, { authorization: `Bearer ${svc.sandboxKey}` }),
        ["rpc call"],
      );
      expect(result.error).to.equal(null);
      expect(result.message.user.id).to.equal(userId);
      const inTrailer = single(result.trailer, "x-request-id");
      expect(single(result.header, "x-request-id")).to.equal(inTrailer);
      expectOneRequestId(lines, inTrailer, ["rpc call"]);
      expect(lines.find((line) => line.msg === "rpc call")).to.include({ procedure: "svc.v1.UsersService/GetUser", protocol: "grpc", code: "ok" });
    });

    it("an error of the method: x-request-id in the trailers (metadata of the status)", async () => {
      const { result, lines } = await withLogLines(
        () => grpcCall(clients.users, "GetUser", { id: "100000001" }, { authorization: `Bearer ${svc.sandboxKey}` }),
        ["rpc call"],
      );
      expect(result.error?.code).to.equal(grpc.status.NOT_FOUND);
      const inTrailer = single(result.trailer, "x-request-id");
      expect(single(result.error!.metadata, "x-request-id")).to.equal(inTrailer);
      expectOneRequestId(lines, inTrailer, ["rpc call"]);
      expect(lines.find((line) => line.msg === "rpc call")).to.include({ code: "not_found" });
    });

    it("a refusal at admission: x-request-id in the trailers", async () => {
      const { result, lines } = await withLogLines(() => grpcCall(clients.users, "GetUser", { id: userId }, {}), ["rpc call"]);
      expect(result.error?.code).to.equal(grpc.status.UNAUTHENTICATED);
      const inTrailer = single(result.trailer, "x-request-id");
      expectOneRequestId(lines, inTrailer, ["rpc call"]);
    });

    it("distinct calls get distinct ids", async () => {
      const a = await grpcCall(clients.users, "GetUser", { id: userId }, { authorization: `Bearer ${svc.sandboxKey}` });
      const b = await grpcCall(clients.users, "GetUser", { id: userId }, { authorization: `Bearer ${svc.sandboxKey}` });
      expect(single(a.trailer, "x-request-id")).to.match(REQUEST_ID).and.not.equal(single(b.trailer, "x-request-id"));
    });
  });

  describe("AdminService", () => {
    it("over Connect: x-request-id in the response, the same as its log lines", async () => {
      let header: Headers | null = null;
      const { result, lines } = await withLogLines(
        () => svc.admin.createOrganization({ name: "Request id organization" }, { onHeader: (h) => (header = h) }),
        ["request completed", "rpc call"],
      );
      expect(result.organization?.id).to.be.a("string");
      const requestId = header!.get("x-request-id");
      expectOneRequestId(lines, requestId, ["request completed", "rpc call"]);
      expect(lines.find((line) => line.msg === "rpc call")).to.include({ procedure: "svc.admin.v1.AdminService/CreateOrganization", code: "ok" });
    });

    it("over gRPC: x-request-id in the trailers of a success and of a refused token", async () => {
      const ok = await withLogLines(
        () => grpcCall(clients.admin, "CreateOrganization", { name: "Request id organization" }, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }),
        ["rpc call"],
      );
      expect(ok.result.error).to.equal(null);
      expectOneRequestId(ok.lines, single(ok.result.trailer, "x-request-id"), ["rpc call"]);

      const refused = await withLogLines(
        () => grpcCall(clients.admin, "CreateOrganization", { name: "x" }, { authorization: "Bearer wrong" }),
        ["rpc call"],
      );
      expect(refused.result.error?.code).to.equal(grpc.status.UNAUTHENTICATED);
      expectOneRequestId(refused.lines, single(refused.result.trailer, "x-request-id"), ["rpc call"]);
    });
  });
});
