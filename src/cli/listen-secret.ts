// The signing secret of `svc listen`: derived from the API key, so every run with the same key prints (and signs
// with) the same secret, and a receiver configured once keeps working across restarts of the CLI.
import { createHmac } from "node:crypto";
import { BASE62_DIGITS } from "../domain/random.ts";
import { WEBHOOK_SECRET_PREFIX } from "../domain/webhook-signature.ts";

const LENGTH = 32;

export function listenSigningSecret(apiKey: string): string {
  const digest = createHmac("sha256", apiKey).update("svc listen signing secret").digest();
  let secret = "";
  // 32 bytes, each to one base62 character: a slight bias toward the first eight characters is harmless here,
  // the secret being as strong as the API key it is derived from.
  for (let i = 0; i < LENGTH; i++) secret += BASE62_DIGITS[digest[i]! % BASE62_DIGITS.length];
  return WEBHOOK_SECRET_PREFIX + secret;
}
