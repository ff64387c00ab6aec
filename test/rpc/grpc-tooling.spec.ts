// The gRPC ecosystem's own tools against the running service: server reflection (buf curl without .proto
// files, grpc-js on v1alpha), grpc.health.v1 through a drain, UNIMPLEMENTED for unknown methods on every RPC
// transport, and grpc-message texts a stock grpc-js client reads back exactly.
import { execFile } from "node:child_process";
import http2 from "node:http2";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { expect } from "chai";
import { bearer, GrpcTestClient } from "../support/grpc-client.ts";
import { capturedLogLines } from "../support/log-capture.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const run = promisify(execFile);
const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));
const buf = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
const loaded = (
  grpc.loadPackageDefinition(
    protoLoader.loadSync(["grpc/health/v1/health.proto", "grpc/reflection/v1alpha/reflection.proto"], {
      includeDirs: [protoDir],
      keepCase: true,
      enums: String,
      defaults: true,
      oneofs: true,
    }),
  ) as any
).grpc;

function logLinesOf(requestId: string): Record<string, unknown>[] {
  return capturedLogLines.filter((line) => line.includes(requestId)).map((line) => JSON.parse(line));
}

function unary(
  client: grpc.Client,
  method: string,
  request: object,
  metadata = new grpc.Metadata(),
): Promise<{ error: grpc.ServiceError | null; reply: any }> {
  return new Promise((resolve) =>
    (client as any)[method](request, metadata, (error: grpc.ServiceError | null, reply: any) => resolve({ error, reply })),
  );
}

/** One raw HTTP/2 request to the gRPC port: headers, trailers and body as the server sent them. */
function rawGrpc(address: string, path: string, body: Buffer, headers: Record<string, string> = {}) {
  return new Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.once("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers });
    let responseHeaders: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.once("response", (h) => (responseHeaders = h));
    stream.once("trailers", (t) => (trailers = t));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.once("close", () => {
      session.close();
      resolve({ headers: responseHeaders, trailers, body: Buffer.concat(chunks) });
    });
    stream.end(body);
  });
}

describe("gRPC tooling", () => {
  let svc: TestService;
  let client: GrpcTestClient;
  let health: grpc.Client;
  before(async () => {
    svc = await startTestService();
    client = new GrpcTestClient(svc.grpcAddress);
    health = new loaded.health.v1.Health(svc.grpcAddress, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    health.close();
    await svc.stop();
  });

  describe("grpc-message", () => {
    it("reads back exactly in grpc-js: ':', '+', ',', '%' and non-ASCII", async () => {
      const name = "svc.v1.Ñope: 100% +1, déjà vu ✓ 名前";
      const { error } = await unary(health, "Check", { service: name });
      expect(error?.code).to.equal(grpc.status.NOT_FOUND);
      expect(error?.details).to.equal(`unknown service ${name}`);
    });

    it("carries a validation message as REST words it (the E.164 message)", async () => {
      const rest = await svc.request("POST", "/v1/users", { body: { phone: "12345" } });
      const failure = await client.fails("UsersService", "CreateUser", { phone: "12345" }, bearer(svc.sandboxKey), {
        code: grpc.status.INVALID_ARGUMENT,
        reason: "validation_error",
        param: "phone",
      });
      expect(rest.body.error.message).to.match(/[:+,]/);
      expect(failure.details).to.equal(rest.body.error.message);
    });
  });

  describe("unknown methods", () => {
    for (const path of ["/svc.v1.UsersService/Nope", "/svc.v1.NoSuchService/Get"]) {
      it(`gRPC ${path}: UNIMPLEMENTED with a request id and a log line`, async () => {
        const stock = new grpc.Client(svc.grpcAddress, grpc.credentials.createInsecure());
        const error = await new Promise<grpc.ServiceError>((resolve) =>
          stock.makeUnaryRequest(
            path,
            (x: Buffer) => x,
            (x: Buffer) => x,
            Buffer.alloc(0),
            (e) => resolve(e as grpc.ServiceError),
          ),
        );
        stock.close();
        expect(error.code).to.equal(grpc.status.UNIMPLEMENTED);
        expect(error.details).to.equal(`The server does not implement the method ${path}.`);
        const requestId = String(error.metadata.get("x-request-id")[0]);
        expect(requestId).to.match(/^req_[A-Za-z0-9]+$/);
        expect(logLinesOf(requestId).map((line) => [line.msg, line.code, line.protocol])).to.deep.include(["rpc call", "unimplemented", "grpc"]);
      });
    }

    it("gRPC: an undecodable message is INVALID_ARGUMENT with a request id and a log line", async () => {
      const garbage = Buffer.from([0, 0, 0, 0, 3, 0x0a, 0xff, 0xff]);
      const { headers } = await rawGrpc(svc.grpcAddress, "/svc.v1.UsersService/GetUser", garbage, bearer(svc.sandboxKey));
      expect(headers["grpc-status"]).to.equal(String(grpc.status.INVALID_ARGUMENT));
      const requestId = String(headers["x-request-id"]);
      expect(requestId).to.match(/^req_[A-Za-z0-9]+$/);
      expect(logLinesOf(requestId).map((line) => [line.msg, line.procedure, line.code])).to.deep.include([
        "rpc call",
        "svc.v1.UsersService/GetUser",
        "invalid_argument",
      ]);
    });

    it("Connect on PORT: unimplemented in Connect's error JSON, with the request id", async () => {
      const response = await fetch(`${svc.baseUrl}/svc.v1.UsersService/Nope`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      // Connect's HTTP status for unimplemented.
      expect(response.status).to.equal(501);
      expect(await response.json()).to.deep.equal({
        code: "unimplemented",
        message: "The server does not implement the method /svc.v1.UsersService/Nope.",
      });
      expect(response.headers.get("x-request-id")).to.match(/^req_[A-Za-z0-9]+$/);
    });

    it("gRPC-Web on PORT: grpc-status 12", async () => {
      const response = await fetch(`${svc.baseUrl}/svc.v1.UsersService/Nope`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web+proto" },
        body: new Uint8Array(5),
      });
      expect(response.status).to.equal(200);
      expect(response.headers.get("grpc-status")).to.equal("12");
    });

    it("Connect over HTTP/2 on GRPC_PORT: unimplemented in Connect's error JSON, with the request id", async () => {
      const answer = await rawGrpc(svc.grpcAddress, "/svc.v1.NoSuchService/Get", Buffer.from("{}"), { "content-type": "application/json" });
      expect(answer.headers[":status"]).to.equal(501);
      expect(answer.headers["content-type"]).to.equal("application/json");
      expect(JSON.parse(answer.body.toString("utf8"))).to.deep.equal({
        code: "unimplemented",
        message: "The server does not implement the method /svc.v1.NoSuchService/Get.",
      });
      expect(String(answer.headers["x-request-id"])).to.match(/^req_[A-Za-z0-9]+$/);
    });

    it("gRPC-Web over HTTP/2 on GRPC_PORT: grpc-status 12, trailers-only", async () => {
      const answer = await rawGrpc(svc.grpcAddress, "/svc.v1.UsersService/Nope", Buffer.alloc(5), { "content-type": "application/grpc-web+proto" });
      expect(answer.headers[":status"]).to.equal(200);
      expect(answer.headers["content-type"]).to.equal("application/grpc-web+proto");
      expect(answer.headers["grpc-status"]).to.equal(String(grpc.status.UNIMPLEMENTED));
      expect(decodeURIComponent(String(answer.headers["grpc-message"]))).to.equal(
        "The server does not implement the method /svc.v1.UsersService/Nope.",
      );
      expect(answer.body.length).to.equal(0);
    });

    it("REST paths keep the REST envelope (route_not_found)", async () => {
      const response = await svc.request("GET", "/v1/nope");
      expect(response.status).to.equal(404);
      expect(response.body.error.code).to.equal("route_not_found");
    });
  });

  describe("server reflection", () => {
    /** Sends `requests` on one v1alpha reflection stream with grpc-js (no header); answers its responses in order. */
    async function reflect(requests: object[]): Promise<any[]> {
      const reflection = new loaded.reflection.v1alpha.ServerReflection(svc.grpcAddress, grpc.credentials.createInsecure());
      const call = reflection.ServerReflectionInfo();
      const answers: any[] = [];
      const done = new Promise<void>((resolve, reject) => {
        call.on("data", (answer: any) => answers.push(answer));
        call.on("end", resolve);
        call.on("error", reject);
      });
      for (const request of requests) call.write(request);
      call.end();
      await done;
      reflection.close();
      return answers;
    }

    it("buf curl --list-services lists the public services, reflection and health; AdminService only with the admin token", async () => {
      const listed = async (...headers: string[]) => {
        const args = ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...headers.flatMap((h) => ["--reflect-header", h])];
        const { stdout } = await run(buf, [...args, "--list-services", `http://${svc.grpcAddress}`]);
        return stdout.trim().split("\n");
      };
      const everyone = [
        "svc.v1.UsersService",
        "svc.v1.EventsService",
        "svc.v1.WebhookEndpointsService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
      ];
      for (const services of [
        await listed(),
        await listed(`authorization: Bearer ${svc.sandboxKey}`),
        await listed("authorization: Bearer adm_wrong"),
      ]) {
        expect(services).to.include.members(everyone);
        expect(services).to.not.include("svc.admin.v1.AdminService");
      }
      expect(await listed(`authorization: Bearer ${svc.adminToken}`)).to.include.members([...everyone, "svc.admin.v1.AdminService"]);
    });

    it("buf curl over the Connect protocol shows a refusal's ErrorInfo decoded (reason, domain, param); over gRPC as base64", async () => {
      const refusal = async (protocol: string) => {
        const failed = await run(buf, [
          "curl",
          "--protocol",
          protocol,
          "--http2-prior-knowledge",
          "-H",
          `authorization: Bearer ${svc.sandboxKey}`,
          "-d",
          '{"phone": "12"}',
          `http://${svc.grpcAddress}/svc.v1.UsersService/CreateUser`,
        ]).then(
          () => expect.fail("buf curl succeeded"),
          (error: { stderr: string }) => error.stderr,
        );
        return JSON.parse(failed).details[0];
      };
      const connect = await refusal("connect");
      expect(connect.type).to.equal("google.rpc.ErrorInfo");
      expect(connect.debug).to.deep.equal({ reason: "validation_error", domain: "svc", metadata: { param: "phone" } });
      const grpc = await refusal("grpc");
      expect(grpc).to.have.keys(["type", "value"]);
    });

    it("buf curl calls EventsService/ListEvents from reflection alone (no --schema)", async () => {
      await client.ok("UsersService", "CreateUser", { phone: uniquePhone() }, bearer(svc.sandboxKey));
      const { stdout } = await run(buf, [
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "-H",
        `authorization: Bearer ${svc.sandboxKey}`,
        "-d",
        '{"limit": 2}',
        `http://${svc.grpcAddress}/svc.v1.EventsService/ListEvents`,
      ]);
      const answer = JSON.parse(stdout);
      expect(answer.data).to.have.length.within(1, 2);
      expect(answer.data[0].type).to.equal("user.created");
    });

    it("describes the error details every refusal carries: google.rpc.ErrorInfo by name, and with every service's file", async () => {
      const answers = await reflect([
        { file_containing_symbol: "google.rpc.ErrorInfo" },
        { file_containing_symbol: "google.rpc.Status" },
        { file_containing_symbol: "svc.v1.UsersService" },
      ]);
      const names = (answer: any) =>
        (answer.file_descriptor_response.file_descriptor_proto as Buffer[]).map((file) => /^\n.([\w/.]+\.proto)/s.exec(file.toString("latin1"))?.[1]);
      expect(names(answers[0])[0]).to.equal("google/rpc/error_details.proto");
      expect(names(answers[1])[0]).to.equal("google/rpc/status.proto");
      expect(names(answers[2])).to.include.members(["svc/v1/users.proto", "google/rpc/error_details.proto", "google/rpc/status.proto"]);
    });

    it("v1alpha answers grpc-js: list_services and file_containing_symbol with the file's imports", async () => {
      const answers = await reflect([
        { list_services: "" },
        { file_containing_symbol: "svc.v1.UsersService.GetUser" },
        { file_containing_symbol: "svc.v1.NoSuchThing" },
        { file_containing_symbol: "svc.admin.v1.AdminService" },
        { file_by_filename: "svc/admin/v1/admin.proto" },
      ]);
      // The internal service is not described to a caller without the admin token.
      expect(answers[3].error_response.error_code).to.equal(grpc.status.NOT_FOUND);
      expect(answers[4].error_response.error_code).to.equal(grpc.status.NOT_FOUND);
      expect(answers[0].list_services_response.service.map((s: { name: string }) => s.name)).to.include("svc.v1.UsersService");
      const files = answers[1].file_descriptor_response.file_descriptor_proto as Buffer[];
      expect(files.length).to.be.greaterThan(1);
      expect(files[0]!.toString("latin1")).to.include("svc/v1/users.proto");
      expect(answers[2].error_response.error_code).to.equal(grpc.status.NOT_FOUND);
    });
  });

  describe("health", () => {
    it("Check: SERVING overall and per service; an unknown name is NOT_FOUND; List names them all", async () => {
      for (const service of ["", "svc.v1.UsersService", "svc.admin.v1.AdminService", "grpc.health.v1.Health"]) {
        const { error, reply } = await unary(health, "Check", { service });
        expect(error, service).to.equal(null);
        expect(reply.status, service).to.equal("SERVING");
      }
      const unknown = await unary(health, "Check", { service: "svc.v1.Nope" });
      expect(unknown.error?.code).to.equal(grpc.status.NOT_FOUND);
      const list = await unary(health, "List", {});
      expect(Object.keys(list.reply.statuses)).to.include.members(["", "svc.v1.UsersService"]);
    });

    it("Check over Connect on PORT", async () => {
      const response = await fetch(`${svc.baseUrl}/grpc.health.v1.Health/Check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(response.status).to.equal(200);
      expect(await response.json()).to.deep.equal({ status: "SERVING" });
    });
  });
});

describe("gRPC health through a drain", () => {
  it("Watch sees SERVING, then NOT_SERVING once App.close() starts, then the stream ends", async () => {
    const svc = await startTestService();
    const health = new loaded.health.v1.Health(svc.grpcAddress, grpc.credentials.createInsecure());
    const seen: string[] = [];
    const call = health.Watch({ service: "" });
    const ended = new Promise<void>((resolve) => {
      call.on("status", () => resolve());
      call.on("error", () => resolve());
    });
    const first = new Promise<void>((resolve) =>
      call.on("data", (answer: { status: string }) => {
        seen.push(answer.status);
        resolve();
      }),
    );
    const unknown = health.Watch({ service: "svc.v1.Nope" });
    const unknownFirst = new Promise<string>((resolve) => unknown.on("data", (answer: { status: string }) => resolve(answer.status)));
    unknown.on("error", () => undefined);
    await first;
    expect(await unknownFirst).to.equal("SERVICE_UNKNOWN");
    const stopped = svc.stop();
    await ended;
    await stopped;
    health.close();
    expect(seen).to.deep.equal(["SERVING", "NOT_SERVING"]);
  });
});
