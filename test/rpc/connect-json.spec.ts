// JSON requests over Connect, gRPC-Web and gRPC refuse unknown fields with InvalidArgument, as REST refuses them
// with 422 validation_error, instead of dropping them silently.
import http2 from "node:http2";
import { expect } from "chai";
import { startTestService, type TestService } from "../support/test-service.ts";

/** One unary gRPC call with a JSON message over h2c; answers the grpc-status and grpc-message trailers. */
async function grpcJsonCall(address: string, path: string, key: string, message: unknown): Promise<{ status: string; message: string }> {
  const client = http2.connect(`http://${address}`);
  try {
    const json = Buffer.from(JSON.stringify(message));
    const frame = Buffer.alloc(5 + json.length);
    frame.writeUInt32BE(json.length, 1);
    json.copy(frame, 5);
    const stream = client.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc+json",
      te: "trailers",
      authorization: `Bearer ${key}`,
    });
    const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => {
      let headers: http2.IncomingHttpHeaders = {};
      stream.on("response", (h) => (headers = h));
      stream.on("trailers", (t) => resolve({ ...headers, ...t }));
      stream.on("end", () => resolve(headers));
    });
    stream.resume();
    stream.end(frame);
    const answer = await trailers;
    return { status: String(answer["grpc-status"]), message: decodeURIComponent(String(answer["grpc-message"] ?? "")) };
  } finally {
    client.close();
  }
}

describe("JSON RPC requests with unknown fields", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it("are refused over Connect with invalid_argument, and nothing is created", async () => {
    const response = await svc.request("POST", "/svc.v1.UsersService/CreateUser", { body: { phone: "+14155550177", bogus: 1 } });
    expect(response.status, response.text).to.equal(400);
    expect(response.body.code).to.equal("invalid_argument");
    expect(response.body.message).to.contain("bogus");
    // Known fields alone are accepted, and the phone is still free: the refused call created nothing.
    const created = await svc.request("POST", "/svc.v1.UsersService/CreateUser", { body: { phone: "+14155550177" } });
    expect(created.status, created.text).to.equal(200);
  });

  it("are refused over gRPC with INVALID_ARGUMENT", async () => {
    const refused = await grpcJsonCall(svc.grpcAddress, "/svc.v1.UsersService/CreateUser", svc.sandboxKey, { phone: "+14155550178", bogus: true });
    expect(refused.status).to.equal("3");
    expect(refused.message).to.contain("bogus");
    const accepted = await grpcJsonCall(svc.grpcAddress, "/svc.v1.EventsService/ListEvents", svc.sandboxKey, {});
    expect(accepted.status).to.equal("0");
  });
});

describe("Connect JSON answers", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it("show every field of the public services, false, zero and empty ones included, as REST does", async () => {
    const created = await svc.request("POST", "/svc.v1.UsersService/CreateUser", { body: { phone: "+14155550177" } });
    expect(created.status).to.equal(200);
    expect(created.body.user).to.include({ suspended: false, livemode: false });
    const events = await svc.request("POST", "/svc.v1.EventsService/ListEvents", { body: { type: "withdrawal.failed", limit: 1 } });
    expect(events.body).to.deep.equal({ data: [], has_more: false });
  });
});
