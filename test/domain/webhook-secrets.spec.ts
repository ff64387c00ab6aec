// The one rule of which secrets sign: the current one, and the one it replaced until its grace period ends.
import { expect } from "chai";
import { activeSecrets, previousSecretInGrace } from "../../src/domain/webhook-secrets.ts";

describe("webhook signing secrets", () => {
  const now = new Date("2030-01-01T12:00:00Z");
  const endpoint = (previous: string | null, expiresAt: Date | null) => ({
    secret: "whsec_new",
    previous_secret: previous,
    previous_secret_expires_at: expiresAt,
  });

  it("signs with the current secret alone when there is no previous one", () => {
    expect(activeSecrets(endpoint(null, null), now)).to.deep.equal(["whsec_new"]);
    expect(previousSecretInGrace(endpoint(null, null), now)).to.equal(false);
  });

  it("signs with the new secret first, then the previous one, until the grace period ends", () => {
    const rotated = endpoint("whsec_old", new Date(now.getTime() + 1));
    expect(activeSecrets(rotated, now)).to.deep.equal(["whsec_new", "whsec_old"]);
    expect(previousSecretInGrace(rotated, now)).to.equal(true);
  });

  it("drops the previous secret at the end of its grace period", () => {
    const ended = endpoint("whsec_old", now);
    expect(activeSecrets(ended, now)).to.deep.equal(["whsec_new"]);
    expect(previousSecretInGrace(ended, now)).to.equal(false);
  });
});
