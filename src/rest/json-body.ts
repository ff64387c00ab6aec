// Request bodies are kept raw until authentication has passed, then parsed here.
import { svcError } from "../domain/errors.ts";
import { MAX_JSON_DEPTH } from "../domain/limits.ts";

/** Whether objects and arrays nest deeper than `max` levels; walked with an explicit stack, never recursion. */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A JSON object, or undefined for no body (zero bytes, or only whitespace); anything else is 400 `invalid_json`.
 * No body is not `{}` where the route requires one (a creation): 400 `invalid_json` too, so a client whose body
 * went missing learns that, not which field is required. Where the body is optional, no body is the same as `{}`.
 */
export function parseJsonObjectBody(raw: Buffer | string | undefined, options: { required?: boolean } = {}): Record<string, unknown> | undefined {
  const text = raw === undefined ? "" : typeof raw === "string" ? raw : raw.toString("utf8");
  if (text.trim() === "") {
    if (options.required) throw svcError("invalid_json", "The request body is empty; this route takes a JSON object.");
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw svcError("invalid_json", "The request body is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw svcError("invalid_json", "The request body must be a JSON object.");
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
    throw svcError("invalid_json", `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  return value as Record<string, unknown>;
}

/**
 * JSON with object keys sorted, so equal bodies give equal idempotency fingerprints. Bodies reach it parsed by
 * parseJsonObjectBody, so its recursion is at most MAX_JSON_DEPTH deep.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
