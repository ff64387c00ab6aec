import { expect } from "chai";
import { describeError } from "../../src/domain/errors.ts";
import { checkWebhookUrl, isRefusedAddress } from "../../src/domain/webhook-url.ts";

type Mode = "live" | "sandbox";

function refusal(raw: unknown, mode: Mode): { code: string; param: string | undefined; message: string } {
  try {
    checkWebhookUrl(raw as string, { livemode: mode === "live" });
  } catch (error) {
    const described = describeError(error);
    return { code: described.code, param: described.param, message: described.message };
  }
  throw new Error(`${String(raw)} was accepted in ${mode}`);
}

// Each entry: the URL, the mode it is refused in, and a fragment of the precise reason.
const SSRF_CORPUS: ReadonlyArray<readonly [string, Mode, string]> = [
  // private, CGNAT, reserved, documentation, benchmarking
  ["https://10.0.0.1/hook", "live", "private address (10.0.0.0/8)"],
  ["https://172.16.5.4/", "live", "private address (172.16.0.0/12)"],
  ["https://172.31.255.255/", "sandbox", "private address (172.16.0.0/12)"],
  ["https://192.168.1.1/", "live", "private address (192.168.0.0/16)"],
  ["https://100.64.0.1/", "live", "carrier-grade NAT"],
  ["https://0.0.0.0/", "live", "unspecified address"],
  ["https://255.255.255.255/", "live", "broadcast"],
  ["https://240.0.0.1/", "live", "reserved address (240.0.0.0/4)"],
  ["https://224.0.0.251/", "live", "multicast"],
  ["https://192.0.2.10/", "live", "documentation"],
  ["https://198.18.0.1/", "live", "benchmarking"],
  // loopback in live mode, in every spelling
  ["https://127.0.0.1/", "live", "loopback"],
  ["http://127.0.0.1:8080/", "live", "https for live endpoints"],
  ["https://[::1]/", "live", "IPv6 loopback"],
  ["https://localhost/", "live", "loopback name"],
  ["http://localhost:3000/", "live", "https for live endpoints"],
  ["https://2130706433/", "live", "loopback"],
  ["http://2130706433/", "sandbox", "http is accepted only"],
  ["https://2130706433/", "sandbox", "loopback"],
  ["https://0177.0.0.1/", "sandbox", "loopback"],
  ["https://0x7f.1/", "sandbox", "loopback"],
  ["https://127.1/", "sandbox", "loopback"],
  ["https://0x7f000001/", "live", "loopback"],
  ["https://0300.0250.0.1/", "live", "private address (192.168.0.0/16)"],
  // link-local and cloud metadata
  ["https://169.254.169.254/latest/meta-data/", "live", "link-local"],
  ["https://[fe80::1]/", "live", "link-local IPv6"],
  ["https://metadata.google.internal/computeMetadata/v1/", "live", "internal name (.internal)"],
  ["https://metadata.google.internal./", "sandbox", "internal name (.internal)"],
  // IPv6 forms embedding refused IPv4 addresses
  ["https://[::ffff:127.0.0.1]/", "live", "IPv4-mapped IPv6 address of 127.0.0.1"],
  ["https://[::ffff:7f00:1]/", "sandbox", "IPv4-mapped IPv6 address of 127.0.0.1"],
  ["https://[::ffff:a9fe:a9fe]/", "live", "IPv4-mapped IPv6 address of 169.254.169.254"],
  ["https://[::127.0.0.1]/", "live", "IPv4-compatible"],
  ["https://[2002:7f00:1::]/", "live", "6to4 IPv6 address of 127.0.0.1"],
  ["https://[2002:c0a8:101::1]/", "live", "6to4 IPv6 address of 192.168.1.1"],
  ["https://[64:ff9b::7f00:1]/", "live", "NAT64 IPv6 address of 127.0.0.1"],
  ["https://[64:ff9b::10.1.2.3]/", "live", "NAT64 IPv6 address of 10.1.2.3"],
  ["https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "live", "Teredo IPv6 address of 192.0.2.45"],
  ["https://[fd00::1]/", "live", "unique local"],
  ["https://[ff02::1]/", "live", "multicast IPv6"],
  ["https://[::]/", "live", "unspecified IPv6"],
  ["https://[2001:db8::1]/", "live", "documentation IPv6"],
  // credentials
  ["https://user:pass@example.com/", "live", "credentials"],
  ["https://user@example.com/", "live", "credentials"],
  ["https://example.com@127.0.0.1/", "sandbox", "credentials"],
  ["http://user@localhost:3000/", "sandbox", "credentials"],
  // sensitive ports
  ["https://example.com:22/", "live", "port 22"],
  ["https://example.com:25/", "live", "port 25"],
  ["https://example.com:6379/", "live", "port 6379"],
  ["https://example.com:5432/", "sandbox", "port 5432"],
  ["https://example.com:27017/", "live", "port 27017"],
  ["https://example.com:0/", "live", "port 0"],
  // internal names
  ["https://intranet/", "live", "single-label"],
  ["https://intranet./", "live", "single-label"],
  ["https://printer.local/", "live", "internal name (.local)"],
  ["https://db.internal/", "live", "internal name (.internal)"],
  ["https://app.localhost/", "sandbox", "internal name (.localhost)"],
  ["https://router.home.arpa./", "live", "internal name (.home.arpa)"],
  ["https://localhost./", "sandbox", "loopback name"],
  // scheme rules
  ["http://example.com/hook", "live", "https for live endpoints"],
  ["http://example.com/hook", "sandbox", "http is accepted only"],
  ["ftp://example.com/", "live", "scheme must be https"],
  ["http://[::1]:3000/", "live", "https for live endpoints"],
  // malformed
  ["", "live", "non-empty"],
  ["not a url", "live", "spaces or control"],
  ["example.com/hook", "live", "not a valid absolute URL"],
  ["https://exa\nmple.com/", "live", "spaces or control"],
  [`https://example.com/${"a".repeat(2048)}`, "live", "at most 2048"],
];

describe("checkWebhookUrl", () => {
  it("has an SSRF corpus of more than 30 URLs", () => {
    expect(SSRF_CORPUS.length).to.be.greaterThan(30);
  });

  for (const [url, mode, reason] of SSRF_CORPUS) {
    it(`refuses ${JSON.stringify(url.length > 80 ? `${url.slice(0, 40)}…` : url)} in ${mode}`, () => {
      const { code, param, message } = refusal(url, mode);
      expect(code).to.equal("invalid_webhook_url");
      expect(param).to.equal("url");
      expect(message).to.contain(reason);
    });
  }

  it("refuses values that are not strings", () => {
    for (const value of [undefined, null, 42, {}]) {
      expect(refusal(value, "sandbox")).to.include({ code: "invalid_webhook_url", param: "url" });
    }
  });

  it("accepts public https URLs in both modes and reports their parts", () => {
    for (const livemode of [true, false]) {
      expect(checkWebhookUrl("https://hooks.example.com/svc?x=1", { livemode })).to.deep.equal({
        url: "https://hooks.example.com/svc?x=1",
        hostname: "hooks.example.com",
        port: 443,
        literalAddress: null,
      });
    }
    expect(checkWebhookUrl("https://93.184.216.34:8443/", { livemode: true })).to.deep.equal({
      url: "https://93.184.216.34:8443/",
      hostname: "93.184.216.34",
      port: 8443,
      literalAddress: "93.184.216.34",
    });
    expect(checkWebhookUrl("https://[2606:4700:4700::1111]/", { livemode: true })).to.deep.include({
      hostname: "2606:4700:4700::1111",
      literalAddress: "2606:4700:4700::1111",
    });
    expect(checkWebhookUrl("https://[64:ff9b::8.8.8.8]/", { livemode: true }).literalAddress).to.equal("64:ff9b::808:808");
    expect(checkWebhookUrl("https://[::ffff:8.8.8.8]/", { livemode: true }).literalAddress).to.equal("::ffff:808:808");
  });

  it("accepts the sandbox loopback hosts over http or https on any port", () => {
    const sandbox = { livemode: false };
    expect(checkWebhookUrl("http://localhost:3000/hooks", sandbox)).to.deep.equal({
      url: "http://localhost:3000/hooks",
      hostname: "localhost",
      port: 3000,
      literalAddress: null,
    });
    expect(checkWebhookUrl("http://127.0.0.1", sandbox)).to.deep.equal({
      url: "http://127.0.0.1/",
      hostname: "127.0.0.1",
      port: 80,
      literalAddress: "127.0.0.1",
    });
    expect(checkWebhookUrl("http://[::1]:4000/x", sandbox)).to.deep.equal({
      url: "http://[::1]:4000/x",
      hostname: "::1",
      port: 4000,
      literalAddress: "::1",
    });
    expect(checkWebhookUrl("https://LOCALHOST:8443/", sandbox).url).to.equal("https://localhost:8443/");
  });

  it("refuses, on the sandbox loopback hosts too, the sensitive ports and the service's own and database ports", () => {
    const refusedLoopbackPorts = new Set([8080, 50051, 41000]);
    const refusedOn = (url: string) => {
      try {
        checkWebhookUrl(url, { livemode: false, refusedLoopbackPorts });
      } catch (error) {
        return describeError(error);
      }
      throw new Error(`${url} was accepted`);
    };
    const sensitive = [22, 23, 25, 53, 110, 135, 139, 143, 445, 1433, 1521, 2375, 2379, 3306, 3389, 5432, 5672, 6379, 9200, 11211, 27017];
    for (const host of ["localhost", "127.0.0.1", "[::1]", "LocalHost"]) {
      for (const port of [...sensitive, 0, 8080, 50051, 41000]) {
        for (const scheme of ["http", "https"]) {
          const described = refusedOn(`${scheme}://${host}:${port}/hook`);
          expect(described.code, `${scheme}://${host}:${port}`).to.equal("invalid_webhook_url");
          expect(described.param).to.equal("url");
          expect(described.definition.status).to.equal(422);
          expect(described.message).to.match(/port/);
        }
      }
    }
    expect(refusedOn("http://localhost:6379/").message).to.contain("port of Redis");
    expect(refusedOn("http://127.0.0.1:8080/").message).to.contain("port of this service or of its database");
    // Other loopback ports stay open to sandbox endpoints; the service's ports are refused on loopback only.
    expect(checkWebhookUrl("http://localhost:3000/", { livemode: false, refusedLoopbackPorts }).port).to.equal(3000);
    expect(checkWebhookUrl("https://hooks.example.com:8080/", { livemode: true, refusedLoopbackPorts }).port).to.equal(8080);
  });

  it("normalises every spelling of one address to one URL", () => {
    const spellings = [
      "https://hooks.example.com/u",
      "https://hooks.example.com/u#x",
      "https://hooks.example.com/u#",
      "https://hooks.example.com./u",
      "https://hooks.example.com/u?",
      "https://hooks.example.com/%75",
      "https://hooks.example.com/%75?#frag",
      "HTTPS://HOOKS.example.COM.:443/u",
    ];
    for (const raw of spellings) {
      const checked = checkWebhookUrl(raw, { livemode: true });
      expect(checked.url, raw).to.equal("https://hooks.example.com/u");
      expect(checked.hostname, raw).to.equal("hooks.example.com");
    }
    // Unreserved characters are decoded, other escapes keep their meaning with uppercase hex digits.
    expect(checkWebhookUrl("https://hooks.example.com/%7e%2d%5F%2e%41%7a%30/%2f%3a?q=%3d%26%41#f", { livemode: true }).url).to.equal(
      "https://hooks.example.com/~-_.Az0/%2F%3A?q=%3D%26A",
    );
    expect(checkWebhookUrl("http://localhost:3000/x?#y", { livemode: false }).url).to.equal("http://localhost:3000/x");
    // Normalising is idempotent: a stored URL checks to itself at every attempt.
    const once = checkWebhookUrl("https://Hooks.Example.com./a/%62%2fc?%78=%7e#z", { livemode: true }).url;
    expect(checkWebhookUrl(once, { livemode: true }).url).to.equal(once);
  });

  it("normalises scheme and host case and drops default ports", () => {
    expect(checkWebhookUrl("HTTPS://Example.COM:443/x", { livemode: true }).url).to.equal("https://example.com/x");
    expect(checkWebhookUrl("https://Example.com:8443/Path?Q=1", { livemode: true }).url).to.equal("https://example.com:8443/Path?Q=1");
    expect(checkWebhookUrl("HTTP://LocalHost:80/x", { livemode: false }).url).to.equal("http://localhost/x");
  });
});

describe("isRefusedAddress", () => {
  const refused = [
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.0.1",
    "169.254.169.254",
    "100.127.255.255",
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
    "239.255.255.255",
    "240.0.0.1",
    "192.0.0.8",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.9",
    "198.19.255.255",
    "192.88.99.1",
    "2130706433",
    "0177.0.0.1",
    "0x7f.1",
    "127.1",
    "0x7f000001",
    "017700000001",
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fdff:ffff::1",
    "fec0::1",
    "ff02::1",
    "100::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::127.0.0.1",
    "::8.8.8.8",
    "2002:7f00:1::",
    "2002:a00:1::1",
    "64:ff9b::7f00:1",
    "64:ff9b::169.254.169.254",
    "64:ff9b:1::8.8.8.8",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:db8::1",
    "2001:2::1",
    "2001:10::1",
    "3fff::1",
    "5f00::1",
    "4000::1",
    "",
    "example.com",
    "1.2.3.4.5",
    "256.1.1.1",
    "::ffff:0127.0.0.1",
    "08.1.1.1",
  ];
  const allowed = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.167.255.255",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "11.0.0.0",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
  ];

  for (const ip of refused) {
    it(`refuses ${JSON.stringify(ip)}`, () => expect(isRefusedAddress(ip)).to.equal(true));
  }
  for (const ip of allowed) {
    it(`allows ${ip}`, () => expect(isRefusedAddress(ip)).to.equal(false));
  }
});
