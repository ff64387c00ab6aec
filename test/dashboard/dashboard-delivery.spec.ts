// The console's delivery page: each attempt's request as sent (URL, headers, the exact body signed) and the
// receiver's answer (status, headers, the first 4 KiB of its body, duration); another tenant's delivery is 404.
import { expect } from "chai";
import { escapeHtml } from "../../src/dashboard/html.ts";
import { eventually } from "../support/eventually.ts";
import { createOtherProject } from "../support/tenancy.ts";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, startWebhookTestService, userCreatedEventId } from "../webhooks/support/fixtures.ts";
import { WebhookReceiver, type ReceivedWebhook } from "../webhooks/support/receiver.ts";
import { DashboardClient } from "./support.ts";

describe("project console: a delivery's attempts", function () {
  this.timeout(60_000);
  let service: TestService;
  let receiver: WebhookReceiver;
  let client: DashboardClient;
  const received: ReceivedWebhook[] = [];
  // Markup in the answer shows it is escaped; past 4 KiB comes a tail that is not kept.
  const answer = `<b>declined</b> ${"x".repeat(5000)}TAIL`;

  before(async () => {
    service = await startWebhookTestService();
    receiver = await WebhookReceiver.start((_req, res, got) => {
      received.push(got);
      res.writeHead(422, { "content-type": "text/html", "x-request-id": "rcv-42" }).end(answer);
    });
    client = new DashboardClient(service);
    expect((await client.signIn(service.sandboxKey)).status).to.equal(303);
  });
  after(async () => {
    await receiver.close();
    await service?.stop();
  });

  /** A new endpoint at `path`, a new user, and that user's `user.created` delivery once its first attempt is recorded. */
  async function attemptedDelivery(path: string, options: { disabled?: boolean } = {}): Promise<{ endpoint: any; eventId: string; delivery: any }> {
    const endpoint = await createEndpoint(service, { url: receiver.url(path), event_types: ["user.created"] });
    if (options.disabled) await service.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: false } });
    const user = await createUser(service);
    const eventId = await userCreatedEventId(service, user.id);
    const list = await eventually(
      () => service.request("GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`),
      (r) => r.body.data.some((d: any) => d.event_id === eventId && d.last_attempt !== null),
      30_000,
    );
    return { endpoint, eventId, delivery: list.body.data.find((d: any) => d.event_id === eventId) };
  }

  it("shows the request body exactly as signed, and the answer's status, headers and first 4 KiB", async () => {
    const { endpoint, eventId, delivery } = await attemptedDelivery("/console");
    const sent = received.find((r) => r.headers["svc-event-id"] === eventId)!;

    // The endpoint page links the delivery's page.
    const endpointPage = await client.get(`/dashboard/webhooks/${endpoint.id}`);
    expect(endpointPage.text).to.include(`href="/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}"`);

    const page = await client.get(`/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}`);
    expect(page.status, page.text.slice(0, 500)).to.equal(200);
    expect(page.text).to.include(`<h1>Delivery <code>${delivery.id}</code></h1>`);
    const first = page.text.slice(page.text.lastIndexOf('<section class="card attempt"'));
    expect(first).to.include('<h2 id="attempt-');
    expect(first).to.include("Attempt 1");
    expect(first).to.include('<span class="response-status">422</span>').and.include("<code>http_422</code>");
    expect(first).to.match(/<span class="duration">\d+ ms<\/span>/);
    // The request: URL, the signature header the receiver got, the exact body that was signed.
    expect(first).to.include(`<code>POST ${escapeHtml(receiver.url("/console"))}</code>`);
    expect(first).to.include(`<dt>Svc-Signature</dt><dd><code>${escapeHtml(String(sent.headers["svc-signature"]))}</code></dd>`);
    expect(first).to.include(`aria-label="Request body">${escapeHtml(sent.rawBody)}</pre>`);
    // The answer: its headers and its first 4 KiB, escaped, the tail not kept.
    expect(first).to.include("<dt>x-request-id</dt><dd><code>rcv-42</code></dd>");
    expect(first).to.include(`aria-label="Response body">${escapeHtml(answer.slice(0, 4096))}</pre>`);
    expect(first).to.include("Only the first 4 KiB are kept.");
    expect(first).to.not.include("TAIL").and.not.include("<b>declined</b>");
    expect(page.text).to.not.include(endpoint.secret);
  });

  it("shows a delivery settled without an attempt (its endpoint disabled) as such, with no request or answer", async () => {
    const { endpoint, delivery } = await attemptedDelivery("/disabled", { disabled: true });
    expect(delivery.last_attempt.error).to.equal("endpoint_disabled");
    const page = await client.get(`/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include("Settled without an attempt").and.include("<code>endpoint_disabled</code>");
    expect(page.text).to.include("No request was sent.").and.include("The receiver did not answer.");
  });

  it("answers 404 for another project's delivery", async () => {
    const { endpoint, delivery } = await attemptedDelivery("/other");
    const other = await createOtherProject(service);
    const stranger = new DashboardClient(service);
    expect((await stranger.signIn(other.sandboxKey)).status).to.equal(303);
    const page = await stranger.get(`/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}`);
    expect(page.status).to.equal(404);
    expect(page.text).to.not.include(delivery.event_id);
  });
});
