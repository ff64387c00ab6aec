// GET /metrics in Prometheus text format: after a known workload the counters show it.
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { eventually } from "../support/eventually.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

/** The value of one sample, e.g. sample(text, 'svc_http_requests_total{route="/v1/users",method="POST",status="201"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("metrics", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it("counts requests by route, method and status, RPCs by procedure and code, and events by type", async () => {
    await svc.request("POST", "/v1/users", { body: { phone: "+14155550161" } });
    await svc.request("POST", "/v1/users", { body: { phone: "+14155550162" } });
    await svc.request("POST", "/v1/users", { body: { phone: "+14155550162" } }); // 409
    await svc.request("GET", "/v1/no-such-route");
    const auth: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${svc.sandboxKey}`);
      return next(req);
    };
    const grpc = createClient(UsersService, createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, interceptors: [auth] }));
    await grpc.createUser({ phone: "+14155550163" });
    await grpc.getUser({ id: "1" }).catch(() => null);

    const response = await fetch(`${svc.baseUrl}/metrics`);
    expect(response.status).to.equal(200);
    expect(response.headers.get("content-type")).to.contain("text/plain");
    const text = await response.text();
    expect(sample(text, 'svc_http_requests_total{route="/v1/users",method="POST",status="201"}')).to.equal(2);
    expect(sample(text, 'svc_http_requests_total{route="/v1/users",method="POST",status="409"}')).to.equal(1);
    expect(sample(text, 'svc_http_requests_total{route="unmatched",method="GET",status="404"}')).to.equal(1);
    expect(sample(text, 'svc_http_request_duration_seconds_count{route="/v1/users",method="POST",status="201"}')).to.equal(2);
    expect(sample(text, 'svc_rpc_calls_total{procedure="svc.v1.UsersService/CreateUser",code="ok",protocol="grpc"}')).to.equal(1);
    expect(sample(text, 'svc_rpc_calls_total{procedure="svc.v1.UsersService/GetUser",code="not_found",protocol="grpc"}')).to.equal(1);
    expect(sample(text, 'svc_events_created_total{type="user.created"}')).to.equal(3);
    expect(sample(text, "svc_webhook_deliveries_pending")).to.equal(0);
    expect(sample(text, "svc_webhook_delivery_lag_seconds")).to.equal(0);
    // The recurring sweeps fall due every few seconds and wait a moment for a worker's lock (longer on a loaded
    // machine): the workers keep up when the lag comes back to 0.
    const caughtUp = await eventually(
      async () => (await fetch(`${svc.baseUrl}/metrics`)).text(),
      (t) => sample(t, "svc_job_lag_seconds") === 0,
    );
    expect(sample(caughtUp, "svc_job_lag_seconds")).to.equal(0);
  });

  it("counts delivery attempts by outcome and error", async () => {
    const ok = await WebhookReceiver.start();
    const failing = await WebhookReceiver.start((_req, res) => res.writeHead(500).end());
    try {
      await svc.request("POST", "/v1/webhook-endpoints", { body: { url: ok.url("/ok"), event_types: ["user.created"] } });
      await svc.request("POST", "/v1/webhook-endpoints", { body: { url: failing.url("/fail"), event_types: ["user.created"] } });
      await svc.request("POST", "/v1/users", { body: { phone: "+14155550164" } });
      const series = {
        succeeded: 'svc_webhook_delivery_attempts_total{outcome="succeeded",error="none"}',
        failed: 'svc_webhook_delivery_attempts_total{outcome="failed",error="http_500"}',
      };
      const text = await eventually(
        async () => (await fetch(`${svc.baseUrl}/metrics`)).text(),
        (t) => sample(t, series.succeeded) === 1 && sample(t, series.failed) === 1,
      );
      expect(sample(text, series.succeeded)).to.equal(1);
      expect(sample(text, series.failed)).to.equal(1);
      // The failed one waits for its retry (1 minute by default).
      expect(sample(text, "svc_webhook_deliveries_pending")).to.equal(1);
      // Not due yet: it is not late.
      expect(sample(text, "svc_webhook_delivery_lag_seconds")).to.equal(0);
    } finally {
      await ok.close();
      await failing.close();
    }
  });
});
