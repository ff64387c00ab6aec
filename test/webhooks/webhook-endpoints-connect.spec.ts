// The same service over Connect: the generated client, field masks, and errors carried as ErrorInfo.
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { WebhookEndpointsService } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import type { TestService } from "../support/test-service.ts";
import { startWebhookTestService } from "./support/fixtures.ts";

async function failureOf(call: Promise<unknown>): Promise<{ code: Code; reason: string; param: string | undefined }> {
  try {
    await call;
  } catch (error) {
    const connect = ConnectError.from(error);
    const [info] = connect.findDetails(ErrorInfoSchema);
    return { code: connect.code, reason: info?.reason ?? "", param: info?.metadata.param };
  }
  throw new Error("the call succeeded");
}

describe("WebhookEndpointsService over Connect", () => {
  let svc: TestService;
  let sandbox: Client<typeof WebhookEndpointsService>;
  let live: Client<typeof WebhookEndpointsService>;
  before(async () => {
    svc = await startWebhookTestService();
    const clientWith = (key: string) =>
      createClient(
        WebhookEndpointsService,
        createConnectTransport({
          baseUrl: svc.baseUrl,
          httpVersion: "1.1",
          interceptors: [
            (next) => async (req) => {
              req.header.set("authorization", `Bearer ${key}`);
              return next(req);
            },
          ],
        }),
      );
    sandbox = clientWith(svc.sandboxKey);
    live = clientWith(svc.liveKey);
  });
  after(async () => {
    await svc.stop();
  });

  it("creates, updates through a field mask, and hides the secret afterwards", async () => {
    const { webhookEndpoint: created } = await sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/connect", eventTypes: ["kyc.approved"] });
    expect(created!.secret).to.match(/^whsec_/);
    expect(created!.eventTypes).to.deep.equal(["kyc.approved"]);
    const { webhookEndpoint: updated } = await sandbox.updateWebhookEndpoint({
      id: created!.id,
      endpoint: { description: "via connect", eventTypes: [] },
      updateMask: { paths: ["description"] },
    });
    expect(updated!.description).to.equal("via connect");
    expect(updated!.eventTypes).to.deep.equal(["kyc.approved"]);
    expect(updated!.secret).to.equal(undefined);
    expect(updated!.secretLast4).to.equal(created!.secret!.slice(-4));
  });

  it("answers the catalogue codes as ErrorInfo reasons", async () => {
    const { webhookEndpoint } = await sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/codes" });
    expect(await failureOf(live.getWebhookEndpoint({ id: webhookEndpoint!.id }))).to.deep.equal({
      code: Code.NotFound,
      reason: "webhook_endpoint_not_found",
      param: undefined,
    });
    expect(await failureOf(sandbox.createWebhookEndpoint({ url: "https://169.254.169.254/" }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "invalid_webhook_url",
      param: "url",
    });
    expect(await failureOf(sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/codes" }))).to.deep.equal({
      code: Code.AlreadyExists,
      reason: "webhook_endpoint_exists",
      param: undefined,
    });
    expect(await failureOf(sandbox.replayWebhookDelivery({ endpointId: webhookEndpoint!.id, id: "whd_none" }))).to.deep.equal({
      code: Code.NotFound,
      reason: "webhook_delivery_not_found",
      param: undefined,
    });
    expect(await failureOf(sandbox.updateWebhookEndpoint({ id: webhookEndpoint!.id, updateMask: { paths: ["secret"] } }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "secret",
    });
  });
});
