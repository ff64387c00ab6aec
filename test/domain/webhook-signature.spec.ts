import { expect } from "chai";
import { createHmac } from "node:crypto";
import { computeSignature, generateWebhookSecret, signatureHeader } from "../../src/domain/webhook-signature.ts";

const SECRET = "whsec_0123456789abcdefghijABCDEFGHIJ";
const BODY = '{"id":"evt_1","type":"user.created","data":{"object":{"name":"Zoë"}}}';

function independentHmac(secret: string, payload: string | Buffer): string {
  return createHmac("sha256", Buffer.from(secret, "utf8")).update(payload).digest("hex");
}

describe("computeSignature", () => {
  it("is HMAC-SHA256 hex of `<t>.<raw body>` keyed with the whole secret, whsec_ included", () => {
    const signature = computeSignature(SECRET, 1_700_000_000, BODY);
    expect(signature).to.match(/^[0-9a-f]{64}$/);
    expect(signature).to.equal(independentHmac(SECRET, `1700000000.${BODY}`));
    expect(signature).not.to.equal(independentHmac(SECRET.slice("whsec_".length), `1700000000.${BODY}`));
  });

  it("signs the raw bytes, so a Buffer and its UTF-8 string agree and other bytes do not", () => {
    const bytes = Buffer.from(BODY, "utf8");
    expect(computeSignature(SECRET, 1, bytes)).to.equal(computeSignature(SECRET, 1, BODY));
    const latin1 = Buffer.from(BODY, "latin1");
    expect(computeSignature(SECRET, 1, latin1)).to.equal(independentHmac(SECRET, Buffer.concat([Buffer.from("1."), latin1])));
    expect(computeSignature(SECRET, 1, latin1)).not.to.equal(computeSignature(SECRET, 1, BODY));
  });

  it("refuses a timestamp that is not integer seconds", () => {
    expect(() => computeSignature(SECRET, 1.5, BODY)).to.throw(RangeError);
    expect(() => computeSignature(SECRET, -1, BODY)).to.throw(RangeError);
    expect(() => computeSignature(SECRET, Number.NaN, BODY)).to.throw(RangeError);
  });
});

describe("signatureHeader", () => {
  it("is t=<t>,v1=<hex> for one secret", () => {
    expect(signatureHeader([SECRET], 1_700_000_123, BODY)).to.equal(`t=1700000123,v1=${independentHmac(SECRET, `1700000123.${BODY}`)}`);
  });

  it("carries one v1 per secret in the order given (new secret first)", () => {
    const older = "whsec_olderolderolderolderolderolde";
    expect(signatureHeader([SECRET, older], 42, BODY)).to.equal(
      `t=42,v1=${independentHmac(SECRET, `42.${BODY}`)},v1=${independentHmac(older, `42.${BODY}`)}`,
    );
  });

  it("needs at least one secret", () => {
    expect(() => signatureHeader([], 42, BODY)).to.throw(RangeError);
  });
});

describe("generateWebhookSecret", () => {
  it("is whsec_ followed by 32 base62 characters", () => {
    for (let i = 0; i < 50; i += 1) expect(generateWebhookSecret()).to.match(/^whsec_[0-9A-Za-z]{32}$/);
  });

  it("draws fresh values that use the whole alphabet", () => {
    const secrets = Array.from({ length: 400 }, () => generateWebhookSecret());
    expect(new Set(secrets).size).to.equal(secrets.length);
    const used = new Set(secrets.join("").replaceAll("whsec_", ""));
    expect(used.size).to.equal(62);
  });
});
