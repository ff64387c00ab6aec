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
  let sandboxBinary: Client<typeof WebhookEndpointsService>;
  before(async () => {
    svc = await startWebhookTestService();
    const clientWith = (key: string, useBinaryFormat = false) =>
      createClient(
        WebhookEndpointsService,
        createConnectTransport({
          baseUrl: svc.baseUrl,
          httpVersion: "1.1",
          useBinaryFormat,
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
    sandboxBinary = clientWith(svc.sandboxKey, true);
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

  describe("the event types of a creation", () => {
    const refusedTypes = { code: Code.InvalidArgument, reason: "validation_error", param: "event_types" };

    it("refuses event_type_list sent empty, in JSON and in binary", async () => {
      for (const client of [sandbox, sandboxBinary]) {
        expect(await failureOf(client.createWebhookEndpoint({ url: "http://127.0.0.1:9/empty-list", eventTypeList: { values: [] } }))).to.deep.equal(
          refusedTypes,
        );
      }
      const { webhookEndpoint: later } = await sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/empty-list" });
      expect(later!.eventTypes).to.deep.equal(["*"]);
    });

    it("subscribes to the types of event_type_list, checked by the usual rules", async () => {
      const { webhookEndpoint } = await sandboxBinary.createWebhookEndpoint({
        url: "http://127.0.0.1:9/listed",
        eventTypeList: { values: ["user.created", "kyc.approved"] },
      });
      expect(webhookEndpoint!.eventTypes).to.deep.equal(["user.created", "kyc.approved"]);
      const { webhookEndpoint: every } = await sandbox.createWebhookEndpoint({
        url: "http://127.0.0.1:9/listed-all",
        eventTypeList: { values: ["*"] },
      });
      expect(every!.eventTypes).to.deep.equal(["*"]);
      expect(
        await failureOf(sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/listed-bad", eventTypeList: { values: ["webhook.test"] } })),
      ).to.deep.equal(refusedTypes);
    });

    it("still reads the deprecated event_types, where an empty list means the default", async () => {
      const { webhookEndpoint: listed } = await sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/legacy", eventTypes: ["user.created"] });
      expect(listed!.eventTypes).to.deep.equal(["user.created"]);
      const { webhookEndpoint: empty } = await sandboxBinary.createWebhookEndpoint({ url: "http://127.0.0.1:9/legacy-empty", eventTypes: [] });
      expect(empty!.eventTypes).to.deep.equal(["*"]);
    });

    it("refuses both fields at once, even when they agree", async () => {
      for (const values of [["user.created"], []]) {
        const failure = await failureOf(
          sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/both", eventTypes: ["user.created"], eventTypeList: { values } }),
        );
        expect(failure).to.deep.equal(refusedTypes);
      }
      const error = await sandbox.createWebhookEndpoint({ url: "http://127.0.0.1:9/both", eventTypes: ["*"], eventTypeList: { values: ["*"] } }).then(
        () => expect.fail("the call succeeded"),
        (e: unknown) => ConnectError.from(e),
      );
      expect(error.rawMessage).to.include("event_type_list").and.include("event_types");
    });

    it("subscribes to every type when neither field is sent", async () => {
      const { webhookEndpoint } = await sandboxBinary.createWebhookEndpoint({ url: "http://127.0.0.1:9/neither" });
      expect(webhookEndpoint!.eventTypes).to.deep.equal(["*"]);
    });

    it("refuses an empty list on update too, when the mask names event_types", async () => {
      const { webhookEndpoint } = await sandbox.createWebhookEndpoint({
        url: "http://127.0.0.1:9/update-empty",
        eventTypeList: { values: ["user.created"] },
      });
      expect(
        await failureOf(
          sandbox.updateWebhookEndpoint({ id: webhookEndpoint!.id, endpoint: { eventTypes: [] }, updateMask: { paths: ["event_types"] } }),
        ),
      ).to.deep.equal(refusedTypes);
      const { webhookEndpoint: read } = await sandbox.getWebhookEndpoint({ id: webhookEndpoint!.id });
      expect(read!.eventTypes).to.deep.equal(["user.created"]);
    });
  });
});
