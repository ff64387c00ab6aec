// Deliveries keep their connections open, pooled by the address each attempt vetted: attempts to one receiver
// share a connection, a name that comes to resolve elsewhere never reuses one opened to the address it had, and a
// kept connection the receiver closed while idle costs no attempt.
import { expect } from "chai";
import type { LookupAll } from "../../src/webhooks/address-vetting.ts";
import { AttemptConnections } from "../../src/webhooks/attempt-connections.ts";
import { postWebhook, type WebhookRequest } from "../../src/webhooks/delivery-client.ts";
import { WebhookReceiver } from "./support/receiver.ts";

function lookupReturning(address: { current: string }): LookupAll {
  return async () => [{ address: address.current, family: 4 }];
}

const request = (url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  body: '{"id":"evt_1"}',
  headers: { "Svc-Event-Id": "evt_1" },
  timeoutMs: 2000,
  livemode: false,
  ...overrides,
});

describe("AttemptConnections", () => {
  let receiver: WebhookReceiver;
  let port = 0;
  before(async () => {
    receiver = await WebhookReceiver.start();
    port = receiver.port;
  });
  after(() => receiver.close());
  beforeEach(() => {
    receiver.connections.length = 0;
    receiver.received.length = 0;
  });

  it("carries a receiver's attempts over one kept connection, and opens one per attempt without a pool", async () => {
    const connections = new AttemptConnections();
    for (let i = 0; i < 3; i++) {
      expect(await postWebhook(request(`http://127.0.0.1:${port}/kept`, { connections }))).to.deep.include({ responseStatus: 200, error: null });
    }
    expect(receiver.received).to.have.length(3);
    expect(receiver.connections).to.have.length(1);
    for (let i = 0; i < 2; i++) await postWebhook(request(`http://127.0.0.1:${port}/own`));
    expect(receiver.connections).to.have.length(3);
    connections.closeIdle();
  });

  it("a kept connection's attempt has no connect phase; a new one's has", async () => {
    const connections = new AttemptConnections();
    const first = await postWebhook(request(`http://127.0.0.1:${port}/t`, { connections }));
    const second = await postWebhook(request(`http://127.0.0.1:${port}/t`, { connections }));
    expect(first.timings!.connectMs).to.be.a("number");
    expect(second.timings!.connectMs).to.equal(null);
    expect(second.timings!.firstByteMs).to.be.a("number");
    connections.closeIdle();
  });

  it("sends once more on a connection of its own when the receiver closed the kept one while idle", async () => {
    const connections = new AttemptConnections();
    await postWebhook(request(`http://127.0.0.1:${port}/a`, { connections }));
    // The receiver closes it, and the attempt is made before this process has heard of the close.
    receiver.closeIdle();
    const result = await postWebhook(request(`http://127.0.0.1:${port}/b`, { connections }));
    expect(result).to.deep.include({ responseStatus: 200, error: null });
    expect(receiver.received.map((r) => r.path)).to.deep.equal(["/a", "/b"]);
    connections.closeIdle();
  });

  it("never reuses a connection opened to the address a name resolved to before (DNS rebinding)", async function () {
    let other: WebhookReceiver;
    try {
      other = await WebhookReceiver.start(undefined, "127.0.0.2");
    } catch {
      this.skip();
    }
    try {
      const connections = new AttemptConnections();
      const address = { current: "127.0.0.2" };
      const url = `http://localhost:${other.port}/rebound`;
      expect(await postWebhook(request(url, { connections, lookup: lookupReturning(address) }))).to.deep.include({ responseStatus: 200 });
      address.current = "127.0.0.1";
      // Nothing listens on 127.0.0.1 at that port: the kept connection to 127.0.0.2 must not carry this attempt.
      const rebound = await postWebhook(request(url, { connections, lookup: lookupReturning(address) }));
      expect(rebound.error).to.equal("connection_refused");
      expect(other.received).to.have.length(1);
      connections.closeIdle();
    } finally {
      await other.close();
    }
  });
});
