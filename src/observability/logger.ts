// Structured JSON logs (pino). Fastify gives every line of a request its `reqId`. Fields that can hold secrets
// or personal data are redacted wherever they appear; strings are scrubbed of what looks like a secret, a phone
// number, an email or a date.
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";
import { scrubText } from "./scrub.ts";

export type { Logger } from "pino";

const REDACTED_FIELDS = [
  "authorization",
  "secret",
  "secrets",
  "previous_secret",
  "phone",
  "email",
  "first_name",
  "last_name",
  "birth_date",
  "body",
  "profile",
  "api_key",
];

const REDACT_PATHS = ["req.headers.authorization", "req.headers.cookie", ...REDACTED_FIELDS, ...REDACTED_FIELDS.map((field) => `*.${field}`)];

/** `value` with its strings scrubbed, to depth 4; a copy only where something changed (most log fields do not). */
function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubText(value);
  if (value instanceof Error) return scrubDeep({ ...stdSerializers.err(value) }, depth);
  if (depth > 4 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => scrubDeep(item, depth + 1));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    // Not a plain object (a URL, a Date): its own fields only, so no toJSON can bring unscrubbed text back.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, depth + 1)]));
  }
  let copy: Record<string, unknown> | null = null;
  for (const [key, field] of Object.entries(value)) {
    const scrubbed = scrubDeep(field, depth + 1);
    if (scrubbed !== field) (copy ??= { ...value })[key] = scrubbed;
  }
  return copy ?? value;
}

export interface LoggerOptions {
  level: string;
  /** Where lines go; standard output by default. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: "svc" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      serializers: {
        err: (error: Error) => scrubDeep(stdSerializers.err(error)) as ReturnType<typeof stdSerializers.err>,
        // The URL, method and caller only: headers and bodies stay out of the logs.
        req: (request: { method?: string; url?: string; ip?: string; socket?: { remoteAddress?: string } }) => ({
          method: request.method,
          url: request.url === undefined ? undefined : scrubText(request.url),
          remoteAddress: request.ip ?? request.socket?.remoteAddress,
        }),
      },
      hooks: {
        logMethod(args, method) {
          // Errors go through the err serializer; other objects and strings are scrubbed here.
          const scrubbed = args.map((arg) => (arg instanceof Error ? arg : scrubDeep(arg)));
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    options.destination,
  );
}
