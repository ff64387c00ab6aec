// Server-streaming calls on GRPC_PORT with binary messages take the direct path of rpc/grpc-server-stream.ts;
// JSON messages take Connect's own handler. Both must answer alike: the same refusals (code, reason, param, the
// request id, the request log's entry), the same headers, the same end at a deadline, and a cancelled stream
// released as soon as the service hears the cancel. A stock grpc-js client reads the direct path's frames, headers
// and trailers.
import http2 from "node:http2";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { EventsService, type StreamEventsResponse } from "../../gen/svc/v1/events_pb.ts";
import { rpcErrorOf } from "../support/errors.ts";
import { eventually } from "../support/eventually.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const UNKNOWN_EVENT = "evt_00000000-0000-4000-8000-000000000000";

describe("server streams over gRPC: the binary path and Connect's handler alike", function () {
  this.timeout(30_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ env: { SVC_MAX_STREAMS_PER_KEY: "2" } });
  });
  after(async () => {
    await svc?.stop();
  });

  function eventsClient(json: boolean, key: string | null = svc.sandboxKey) {
    const withKey: Interceptor = (next) => (request) => {
      if (key !== null) request.header.set("authorization", `Bearer ${key}`);
      return next(request);
    };
    return createClient(
      EventsService,
      createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, useBinaryFormat: !json, interceptors: [withKey] }),
    );
  }

  /** A stream's first message (caught up), read; the stream stays open until `close`. */
  async function openStream(json: boolean) {
    const abort = new AbortController();
    const messages = (eventsClient(json).streamEvents({}, { signal: abort.signal }) as AsyncIterable<StreamEventsResponse>)[Symbol.asyncIterator]();
    expect((await messages.next()).value?.caughtUp).to.equal(true);
    return { close: () => abort.abort() };
  }

  for (const json of [false, true]) {
    const path = json ? "JSON (Connect's handler)" : "binary (the direct path)";

    it(`${path}: refuses before the first message with the code, reason, param and request id, and logs the refusal`, async () => {
      expect(await rpcErrorOf(first(eventsClient(json, null).streamEvents({})))).to.deep.equal({
        code: Code.Unauthenticated,
        reason: "missing_api_key",
        param: undefined,
      });
      expect(await rpcErrorOf(first(eventsClient(json).streamEvents({ types: ["user.deleted"] })))).to.deep.equal({
        code: Code.InvalidArgument,
        reason: "validation_error",
        param: "types",
      });
      const refusal = await first(eventsClient(json).streamEvents({ startingAfter: UNKNOWN_EVENT })).catch((error: unknown) =>
        ConnectError.from(error),
      );
      expect(refusal).to.be.instanceOf(ConnectError);
      const requestId = (refusal as ConnectError).metadata.get("x-request-id");
      expect(requestId).to.match(/^req_[A-Za-z0-9]+$/);
      const log = await eventually(
        () => svc.request("GET", `/v1/request-logs/${requestId}`),
        (r) => r.status !== 404,
      );
      expect(log.body).to.deep.include({
        id: requestId,
        method: "RPC",
        path: "/svc.v1.EventsService/StreamEvents",
        status: 400,
        error_code: "invalid_cursor",
        source: "grpc",
      });
    });

    it(`${path}: a stream the client cancels is released: the key's limit admits another once the service hears the cancel`, async () => {
      const open = [await openStream(json), await openStream(json)];
      expect(await rpcErrorOf(first(eventsClient(json).streamEvents({})))).to.include({
        code: Code.ResourceExhausted,
        reason: "rate_limit_exceeded",
      });
      open[0]!.close();
      // The service hears the cancel (RST_STREAM) a moment after the client sends it.
      const again = await eventually(
        () => openStream(json).catch(() => null),
        (stream) => stream !== null,
      );
      open[1]!.close();
      again!.close();
    });
  }

  it("both paths answer the same headers first and end with grpc-status 0 at the call's deadline (grpc-timeout)", async () => {
    const ends = [];
    for (const [contentType, body] of [
      ["application/grpc", Buffer.from([0, 0, 0, 0, 0])],
      ["application/grpc+json", Buffer.concat([Buffer.from([0, 0, 0, 0, 2]), Buffer.from("{}")])],
    ] as const) {
      const session = http2.connect(`http://${svc.grpcAddress}`);
      try {
        const stream = session.request({
          ":method": "POST",
          ":path": "/svc.v1.EventsService/StreamEvents",
          "content-type": contentType,
          te: "trailers",
          authorization: `Bearer ${svc.sandboxKey}`,
          "grpc-timeout": "300m",
        });
        stream.end(body);
        const [headers, trailers] = await Promise.all([
          new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once("response", resolve)),
          new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once("trailers", resolve)),
          new Promise((resolve) => stream.resume().once("end", resolve)),
        ]);
        expect(headers[":status"]).to.equal(200);
        expect(headers["content-type"]).to.equal(contentType);
        expect(headers["x-request-id"]).to.match(/^req_/);
        expect(headers["x-ratelimit-limit"]).to.be.a("string");
        expect(headers["grpc-status"]).to.equal(undefined);
        ends.push({ status: trailers["grpc-status"], sameId: trailers["x-request-id"] === headers["x-request-id"] });
      } finally {
        session.close();
      }
    }
    expect(ends).to.deep.equal([
      { status: "0", sameId: true },
      { status: "0", sameId: true },
    ]);
  });

  it("a stock grpc-js client reads the direct path: headers with the request id, caught_up, then a live event", async () => {
    const client = new GrpcTestClient(svc.grpcAddress);
    type Message = { caught_up?: boolean; event?: { id: string; type: string; data_json: string } };
    const call = client.stream<Message>("EventsService", "StreamEvents", { exclude_struct_data: true }, bearer(svc.sandboxKey));
    try {
      const header = new Promise<grpc.Metadata>((resolve) => call.once("metadata", resolve));
      const received: Message[] = [];
      const arrived = (count: number) =>
        new Promise<void>((resolve, reject) => {
          const check = () => (received.length >= count ? resolve() : undefined);
          call.on("data", (message) => {
            received.push(message);
            check();
          });
          call.once("error", reject);
          check();
        });
      const caughtUp = arrived(1);
      expect(String((await header).get("x-request-id")[0])).to.match(/^req_/);
      await caughtUp;
      expect(received[0]!.caught_up).to.equal(true);
      const live = arrived(2);
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      expect(created.status).to.equal(201);
      await live;
      expect(received[1]!.event!.type).to.equal("user.created");
      expect(JSON.parse(received[1]!.event!.data_json).object.id).to.equal(created.body.id);
    } finally {
      const ended = new Promise<grpc.StatusObject>((resolve) => call.once("status", resolve));
      call.cancel();
      expect((await ended).code).to.equal(grpc.status.CANCELLED);
      client.close();
    }
  });
});

/** A stream's first message, or its refusal. */
async function first(messages: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of messages) return;
}
