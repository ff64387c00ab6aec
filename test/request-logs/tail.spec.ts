// TailRequestLogs: the caller's project and environment's calls as they are answered, with the list's filters,
// over Connect and gRPC; other tenants' calls never appear; a bad filter refuses the stream.
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { RequestLogsService, type TailRequestLogsRequestSchema } from "../../gen/svc/v1/request_logs_pb.ts";
import { createOtherProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("TailRequestLogs", function () {
  this.timeout(30_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
  });

  after(async () => {
    await svc?.stop();
  });

  function client(transport: "connect" | "grpc", key = svc.sandboxKey) {
    const auth: Interceptor = (next) => (request) => {
      request.header.set("authorization", `Bearer ${key}`);
      return next(request);
    };
    return createClient(
      RequestLogsService,
      transport === "connect"
        ? createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", interceptors: [auth] })
        : createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, interceptors: [auth] }),
    );
  }

  /** Opens a tail, then runs `act` once the stream is subscribed; answers the ids received until `until` holds. */
  async function tail(
    transport: "connect" | "grpc",
    request: MessageInitShape<typeof TailRequestLogsRequestSchema>,
    act: () => Promise<void>,
    until: (ids: string[]) => boolean,
  ): Promise<string[]> {
    const stop = new AbortController();
    const ids: string[] = [];
    let caughtUp = 0;
    const before = svc.app.liveRequestLogs.size;
    const reading = (async () => {
      try {
        for await (const message of client(transport).tailRequestLogs(request, { signal: stop.signal })) {
          if (message.caughtUp) {
            caughtUp++;
            continue;
          }
          ids.push(message.requestLog!.id);
          if (until(ids)) break;
        }
      } catch (error) {
        if (!stop.signal.aborted) throw error;
      }
    })();
    const deadline = performance.now() + 10_000;
    while (svc.app.liveRequestLogs.size <= before && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await act();
    const timer = setTimeout(() => stop.abort(), 10_000);
    await reading;
    clearTimeout(timer);
    // One message says the tail is subscribed, before any entry.
    expect(caughtUp).to.equal(1);
    return ids;
  }

  for (const transport of ["connect", "grpc"] as const) {
    it(`${transport}: sends the calls answered after it opened that pass its filters, and none of another tenant`, async () => {
      const other = await createOtherProject(svc);
      let mine = "";
      let theirs = "";
      let success = "";
      const ids = await tail(
        transport,
        { status: "4xx", route: "/v1/users/{id}" },
        async () => {
          theirs = (await svc.request("GET", "/v1/users/999999999", { key: other.sandboxKey })).headers.get("x-request-id")!;
          success = (await svc.request("GET", "/v1/events")).headers.get("x-request-id")!;
          mine = (await svc.request("GET", "/v1/users/999999999")).headers.get("x-request-id")!;
        },
        (received) => received.includes(mine),
      );
      expect(ids).to.include(mine);
      expect(ids).to.not.include(theirs);
      expect(ids).to.not.include(success);
    });
  }

  it("refuses a bad filter when it opens: InvalidArgument, validation_error naming it", async () => {
    try {
      for await (const _ of client("grpc").tailRequestLogs({ status: "4x" })) break;
      expect.fail("the tail opened");
    } catch (error) {
      const e = ConnectError.from(error);
      expect(e.code).to.equal(Code.InvalidArgument);
      const info = e.findDetails(ErrorInfoSchema)[0];
      expect(info?.reason).to.equal("validation_error");
      expect(info?.metadata.param).to.equal("status");
    }
  });
});
