// What a REST request body must be before it is parsed as JSON: declared as JSON, and UTF-8. Checked with the
// JSON itself, after the rate limit (docs/contract.md, Check order), so refusals are never stored.
import { isUtf8 } from "node:buffer";
import { svcError } from "../domain/errors.ts";

/** Whether a Content-Type value names JSON: `application/json`, any parameters (RFC 8259 defines none). */
function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return contentType.split(";", 1)[0]!.trim().toLowerCase() === "application/json";
}

/**
 * A request that carries a body (one byte or more) must declare it `application/json` (else 415
 * `unsupported_media_type`), and the body must be UTF-8 (else 400 `invalid_json`). A request without a body may
 * send any Content-Type, or none.
 */
export function checkJsonBodyEncoding(contentType: string | undefined, raw: Buffer | undefined): void {
  if (raw === undefined || raw.length === 0) return;
  if (!isJsonMediaType(contentType)) {
    throw svcError(
      "unsupported_media_type",
      contentType === undefined
        ? "A request body must be sent with Content-Type: application/json."
        : `Content-Type ${JSON.stringify(contentType.slice(0, 100))} is not accepted: send application/json.`,
    );
  }
  if (!isUtf8(raw)) throw svcError("invalid_json", "The request body is not valid UTF-8.");
}
