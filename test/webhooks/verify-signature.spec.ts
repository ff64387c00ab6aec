import { expect } from "chai";
import { createHmac } from "node:crypto";
import { signatureHeader } from "../../src/domain/webhook-signature.ts";
import { verifyWebhookSignature } from "../../src/webhooks/verify-signature.ts";

const NEW_SECRET = "whsec_NewNewNewNewNewNewNewNewNewNewNe";
const OLD_SECRET = "whsec_OldOldOldOldOldOldOldOldOldOldOl";
const BODY = '{"id":"9b2c","object":"event","type":"webhook.test","data":{"message":"hello"}}';
const T = 1_750_000_000;
const at = (seconds: number) => ({ now: () => seconds * 1000 });

/** The receiver rule computed by hand, independently of the code under test. */
function hmacHex(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex");
}

describe("verifyWebhookSignature", () => {
  it("accepts a header built by hand from the receiver rules", () => {
    const header = `t=${T},v1=${hmacHex(NEW_SECRET, T, BODY)}`;
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T))).to.equal(true);
    expect(verifyWebhookSignature(Buffer.from(BODY), header, [NEW_SECRET], at(T))).to.equal(true);
  });

  it("signs over t exactly as written in the header", () => {
    const padded = `0${T}`;
    const header = `t=${padded},v1=${createHmac("sha256", NEW_SECRET).update(`${padded}.${BODY}`).digest("hex")}`;
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T))).to.equal(true);
    expect(verifyWebhookSignature(BODY, `t=${padded},v1=${hmacHex(NEW_SECRET, T, BODY)}`, NEW_SECRET, at(T))).to.equal(false);
  });

  it("accepts what signatureHeader produces, whose v1 equals the independent HMAC", () => {
    const header = signatureHeader([NEW_SECRET], T, BODY);
    expect(header).to.equal(`t=${T},v1=${hmacHex(NEW_SECRET, T, BODY)}`);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T))).to.equal(true);
  });

  it("during a rotation, the two v1 values come new first and either secret verifies", () => {
    const header = signatureHeader([NEW_SECRET, OLD_SECRET], T, BODY);
    const v1 = header
      .split(",")
      .filter((item) => item.startsWith("v1="))
      .map((item) => item.slice(3));
    expect(v1).to.deep.equal([hmacHex(NEW_SECRET, T, BODY), hmacHex(OLD_SECRET, T, BODY)]);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T))).to.equal(true);
    expect(verifyWebhookSignature(BODY, header, OLD_SECRET, at(T))).to.equal(true);
    expect(verifyWebhookSignature(BODY, header, ["whsec_other", OLD_SECRET], at(T))).to.equal(true);
    expect(verifyWebhookSignature(BODY, header, "whsec_other", at(T))).to.equal(false);
  });

  it("accepts within 300 seconds either way and rejects beyond", () => {
    const header = signatureHeader([NEW_SECRET], T, BODY);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T + 300))).to.equal(true);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T - 300))).to.equal(true);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T + 301))).to.equal(false);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T - 301))).to.equal(false);
  });

  it("honours a custom tolerance in both directions", () => {
    const header = signatureHeader([NEW_SECRET], T, BODY);
    const options = (seconds: number) => ({ toleranceSeconds: 10, ...at(seconds) });
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, options(T + 10))).to.equal(true);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, options(T + 11))).to.equal(false);
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, options(T - 11))).to.equal(false);
  });

  it("uses the clock by default", () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifyWebhookSignature(BODY, signatureHeader([NEW_SECRET], now, BODY), NEW_SECRET)).to.equal(true);
    expect(verifyWebhookSignature(BODY, signatureHeader([NEW_SECRET], now - 3600, BODY), NEW_SECRET)).to.equal(false);
  });

  it("ignores unknown schemes and tolerates spaces", () => {
    const good = hmacHex(NEW_SECRET, T, BODY);
    const header = ` t = ${T} , v0=${"ab".repeat(32)}, x=1,v2=${good} ,  v1 = ${good} , ext=a=b`;
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T))).to.equal(true);
    expect(verifyWebhookSignature(BODY, `t=${T},v2=${good}`, NEW_SECRET, at(T))).to.equal(false);
  });

  it("rejects a tampered body, timestamp or signature", () => {
    const header = signatureHeader([NEW_SECRET], T, BODY);
    expect(verifyWebhookSignature(`${BODY} `, header, NEW_SECRET, at(T))).to.equal(false);
    expect(verifyWebhookSignature(BODY.replace("hello", "hellO"), header, NEW_SECRET, at(T))).to.equal(false);
    expect(verifyWebhookSignature(BODY, header.replace(`t=${T}`, `t=${T + 1}`), NEW_SECRET, at(T))).to.equal(false);
    const flipped = header.slice(0, -1) + (header.endsWith("0") ? "1" : "0");
    expect(verifyWebhookSignature(BODY, flipped, NEW_SECRET, at(T))).to.equal(false);
  });

  it("rejects malformed headers without throwing", () => {
    const good = hmacHex(NEW_SECRET, T, BODY);
    const malformed: unknown[] = [
      undefined,
      null,
      42,
      "",
      ",,,",
      "garbage",
      `v1=${good}`,
      `t=,v1=${good}`,
      `t=abc,v1=${good}`,
      `t=-${T},v1=${good}`,
      `t=${T}.5,v1=${good}`,
      `t=1e9,v1=${good}`,
      `t=${T},t=${T},v1=${good}`,
      `t=${T}`,
      `t=${T},v1=`,
      `t=${T},v1=${good.slice(0, 63)}`,
      `t=${T},v1=${good}00`,
      `t=${T},v1=${"zz".repeat(32)}`,
      `t=${"9".repeat(400)},v1=${good}`,
    ];
    for (const header of malformed) {
      expect(verifyWebhookSignature(BODY, header as string, NEW_SECRET, at(T)), String(header)).to.equal(false);
    }
  });

  it("rejects bodies that are not raw text or bytes, and empty secrets", () => {
    const header = signatureHeader([NEW_SECRET], T, BODY);
    expect(verifyWebhookSignature(JSON.parse(BODY) as string, header, NEW_SECRET, at(T))).to.equal(false);
    const emptyKeyed = `t=${T},v1=${hmacHex("", T, BODY)}`;
    expect(verifyWebhookSignature(BODY, emptyKeyed, "", at(T))).to.equal(false);
    expect(verifyWebhookSignature(BODY, emptyKeyed, [], at(T))).to.equal(false);
  });

  it("accepts an uppercase hex signature (same bytes)", () => {
    const header = `t=${T},v1=${hmacHex(NEW_SECRET, T, BODY).toUpperCase()}`;
    expect(verifyWebhookSignature(BODY, header, NEW_SECRET, at(T))).to.equal(true);
  });
});
