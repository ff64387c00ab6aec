// Request bodies are kept raw until authentication has passed, then parsed here.
import { svcError } from "../domain/errors.ts";
import { MAX_JSON_DEPTH } from "../domain/limits.ts";

/** Whether objects and arrays nest deeper than `max` levels; walked with an explicit stack, never recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
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

/** A JSON object, or undefined for an empty body; anything else is 400 `invalid_json`. */
export function parseJsonObjectBody(raw: Buffer | string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  const text = typeof raw === "string" ? raw : raw.toString("utf8");
  if (text.trim() === "") return undefined;
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
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
