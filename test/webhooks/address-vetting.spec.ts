import { expect } from "chai";
import { describeError } from "../../src/domain/errors.ts";
import { checkWebhookUrl } from "../../src/domain/webhook-url.ts";
import { assertResolvableHostAllowed, DeliveryFailure, vetHost, type LookupAll } from "../../src/webhooks/address-vetting.ts";

function resolvingTo(...addresses: string[]): LookupAll & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

const notFound: LookupAll = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};

async function failureOf(promise: Promise<unknown>): Promise<DeliveryFailure> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(DeliveryFailure);
    return error as DeliveryFailure;
  }
  throw new Error("expected a DeliveryFailure");
}

async function refusalOf(promise: Promise<unknown>): Promise<{ code: string; param?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return describeError(error);
  }
  throw new Error("expected a refusal");
}

const live = { livemode: true } as const;
const sandbox = { livemode: false } as const;
const hooks = checkWebhookUrl("https://hooks.example.com/svc", live);

describe("vetHost", () => {
  it("returns the first resolved address when every address is public", async () => {
    const lookup = resolvingTo("93.184.216.34", "2606:2800:220:1::1");
    expect(await vetHost(hooks, { ...live, lookup })).to.deep.equal({ address: "93.184.216.34", family: 4 });
    expect(lookup.calls).to.deep.equal(["hooks.example.com"]);
    expect(await vetHost(hooks, { ...live, lookup: resolvingTo("2606:2800:220:1::1") })).to.deep.equal({ address: "2606:2800:220:1::1", family: 6 });
  });

  it("blocks a name resolving to 127.0.0.1 in live mode (ssrf_blocked)", async () => {
    const failure = await failureOf(vetHost(hooks, { ...live, lookup: resolvingTo("127.0.0.1") }));
    expect(failure.code).to.equal("ssrf_blocked");
    expect(failure.message).to.contain("127.0.0.1").and.to.contain("loopback");
  });

  it("blocks a name resolving to a mix of public and private addresses, whatever the order", async () => {
    for (const addresses of [
      ["93.184.216.34", "10.0.0.5"],
      ["10.0.0.5", "93.184.216.34"],
      ["8.8.8.8", "::ffff:169.254.169.254"],
    ]) {
      const failure = await failureOf(vetHost(hooks, { ...sandbox, lookup: resolvingTo(...addresses) }));
      expect(failure.code).to.equal("ssrf_blocked");
    }
  });

  it("blocks answers that are not IP addresses", async () => {
    const failure = await failureOf(vetHost(hooks, { ...live, lookup: resolvingTo("evil.example") }));
    expect(failure.code).to.equal("ssrf_blocked");
  });

  it("gives dns_error for a name that does not resolve or resolves to nothing", async () => {
    expect((await failureOf(vetHost(hooks, { ...live, lookup: notFound }))).code).to.equal("dns_error");
    expect((await failureOf(vetHost(hooks, { ...live, lookup: resolvingTo() }))).code).to.equal("dns_error");
  });

  it("uses the system resolver by default", async () => {
    const unresolvable = checkWebhookUrl("https://no-such-host.invalid/", live);
    expect((await failureOf(vetHost(unresolvable, live))).code).to.equal("dns_error");
  });

  it("lets sandbox localhost reach loopback addresses only", async () => {
    const localhost = checkWebhookUrl("http://localhost:3000/", sandbox);
    expect(await vetHost(localhost, { ...sandbox, lookup: resolvingTo("::1", "127.0.0.1") })).to.deep.equal({ address: "::1", family: 6 });
    const failure = await failureOf(vetHost(localhost, { ...sandbox, lookup: resolvingTo("127.0.0.1", "10.0.0.1") }));
    expect(failure.code).to.equal("ssrf_blocked");
    expect((await failureOf(vetHost(localhost, { ...live, lookup: resolvingTo("127.0.0.1") }))).code).to.equal("ssrf_blocked");
  });

  it("pins IP literals without any lookup, and re-vets them", async () => {
    const lookup = resolvingTo("8.8.8.8");
    const literal = checkWebhookUrl("http://127.0.0.1:9000/", sandbox);
    expect(await vetHost(literal, { ...sandbox, lookup })).to.deep.equal({ address: "127.0.0.1", family: 4 });
    expect(await vetHost(checkWebhookUrl("http://[::1]:9000/", sandbox), { ...sandbox, lookup })).to.deep.equal({ address: "::1", family: 6 });
    expect(lookup.calls).to.deep.equal([]);
    // A URL checked for sandbox but delivered in live mode is blocked.
    expect((await failureOf(vetHost(literal, { ...live, lookup }))).code).to.equal("ssrf_blocked");
  });
});

describe("assertResolvableHostAllowed", () => {
  it("refuses a name resolving to 127.0.0.1 as invalid_webhook_url on url", async () => {
    const refusal = await refusalOf(assertResolvableHostAllowed(hooks, { ...live, lookup: resolvingTo("127.0.0.1") }));
    expect(refusal).to.deep.include({ code: "invalid_webhook_url", param: "url" });
    expect(refusal.message).to.equal("The URL host hooks.example.com resolves to 127.0.0.1, a loopback address (127.0.0.0/8).");
  });

  it("refuses a name resolving to a mix of public and private addresses", async () => {
    const lookup = resolvingTo("93.184.216.34", "fd12::1");
    expect(await refusalOf(assertResolvableHostAllowed(hooks, { ...sandbox, lookup }))).to.deep.include({
      code: "invalid_webhook_url",
      param: "url",
    });
  });

  it("accepts a name that does not resolve, and one resolving to public addresses", async () => {
    await assertResolvableHostAllowed(hooks, { ...live, lookup: notFound });
    await assertResolvableHostAllowed(hooks, { ...live, lookup: resolvingTo("93.184.216.34") });
  });

  it("accepts sandbox localhost", async () => {
    const localhost = checkWebhookUrl("http://localhost:3000/", sandbox);
    await assertResolvableHostAllowed(localhost, { ...sandbox, lookup: resolvingTo("127.0.0.1") });
  });
});
