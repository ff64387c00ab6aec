// API key format, generation and hashing. Keys are shown once and stored only as SHA-256 hashes.
import { createHash } from "node:crypto";
import { validationError } from "./errors.ts";
import { randomBase62 } from "./random.ts";
import { checkText, codePointLength } from "./text.ts";

/** The longest name of an API key, in characters. */
const MAX_API_KEY_NAME_LENGTH = 100;

/** An API key's name as given: 1 to 100 characters, one line of text; else 422 on `name`. */
export function apiKeyNameOf(name: string): string {
  const length = codePointLength(name.trim());
  if (length === 0 || codePointLength(name) > MAX_API_KEY_NAME_LENGTH) {
    throw validationError("name", `name must be 1 to ${MAX_API_KEY_NAME_LENGTH} characters.`);
  }
  return checkText("name", name, "name");
}

const KEY_PATTERN = /^svc_(test|live)_[A-Za-z0-9]{24,}$/;

const SANDBOX_KEY_PREFIX = "svc_test_";
const LIVE_KEY_PREFIX = "svc_live_";

export function generateApiKey(livemode: boolean): string {
  return (livemode ? LIVE_KEY_PREFIX : SANDBOX_KEY_PREFIX) + randomBase62(32);
}

/** The environment a well-formed key belongs to, or null when the key is malformed. */
export function apiKeyLivemode(secret: string): boolean | null {
  const match = KEY_PATTERN.exec(secret);
  return match ? match[1] === "live" : null;
}

/** Keys are high-entropy random strings, so a plain SHA-256 is a sufficient one-way hash. */
export function hashApiKey(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export type BearerCredential =
  | { kind: "missing" }
  | { kind: "malformed" }
  /** Not a Bearer credential (Basic, as `curl -u key:` sends it; a bare key): refused, saying how to send the key. */
  | { kind: "scheme" }
  | { kind: "key"; secret: string; livemode: boolean };

/**
 * Reads an `Authorization` header: absent or empty is missing; any scheme but Bearer, or a token
 * that is not a well-formed key, is malformed.
 */
export function readBearerCredential(authorization: string | null | undefined): BearerCredential {
  if (authorization === undefined || authorization === null || authorization.trim() === "") {
    return { kind: "missing" };
  }
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  if (!match) return /^Bearer\b/i.test(authorization.trim()) ? { kind: "malformed" } : { kind: "scheme" };
  const secret = match[1]!;
  const livemode = apiKeyLivemode(secret);
  return livemode === null ? { kind: "malformed" } : { kind: "key", secret, livemode };
}
