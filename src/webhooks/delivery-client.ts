// One webhook delivery attempt over HTTP(S): re-checks the URL rules, vets the resolved address, connects
// only to that address, never follows redirects, and reports the outcome as an attempt error code.
import http from "node:http";
import https from "node:https";
import type { LookupFunction, Socket } from "node:net";
import { describeError } from "../domain/errors.ts";
import { ATTEMPT_REQUEST_BODY_KEPT_BYTES, ATTEMPT_RESPONSE_BODY_KEPT_BYTES } from "../domain/limits.ts";
import { checkWebhookUrl, type CheckedWebhookUrl } from "../domain/webhook-url.ts";
import { WEBHOOK_USER_AGENT } from "../domain/webhook-signature.ts";
import { DeliveryFailure, vetHost, type DeliveryFailureCode, type LookupAll, type VettedAddress } from "./address-vetting.ts";
import type { AttemptConnections } from "./attempt-connections.ts";
import { AttemptDeadline } from "./attempt-deadline.ts";
import type { InFlightAttempts } from "./in-flight-attempts.ts";

/** The `error` of an attempt: the values of docs/contract.md, Attempt errors, an attempt itself can produce. */
export type AttemptError = `http_${number}` | DeliveryFailureCode;

/**
 * How long each phase of an attempt took, in whole milliseconds; null for a phase that did not happen or did
 * not complete (no DNS for an IP literal, no TLS over http, nothing after a refused connection).
 */
export interface AttemptTimings {
  /** Resolving the host name (and vetting its addresses). */
  dnsMs: number | null;
  /** From opening the socket to the TCP connection being established. */
  connectMs: number | null;
  /** The TLS handshake, from TCP connected to secure. */
  tlsMs: number | null;
  /** From the connection being ready (TCP, or TLS over https) to the first byte of the answer (its status line). */
  firstByteMs: number | null;
}

export interface AttemptResult {
  /** The status the receiver answered, null when it did not answer. */
  responseStatus: number | null;
  /** Null on success (any 2xx). */
  error: AttemptError | null;
  /** Whole milliseconds from the start of the attempt (URL check and DNS included) to its outcome. */
  durationMs: number;
  /** The phases of the attempt (test events show them). Absent from results not made over the network. */
  timings?: AttemptTimings;
  /** For `ssrf_blocked`: the rule that refused, naming the refused address class; else null. */
  errorDetail?: string | null;
  /** The request as sent; absent when none was made (the URL refused before a request was built). */
  request?: SentRequest;
  /** The receiver's answer; absent when it did not answer. */
  response?: ReceivedResponse;
}

/** An attempt's request as it was sent (the body cut to its first ATTEMPT_REQUEST_BODY_KEPT_BYTES). */
export interface SentRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  bodyTruncated: boolean;
}

/** An attempt's response: its headers and the first ATTEMPT_RESPONSE_BODY_KEPT_BYTES of its body. */
export interface ReceivedResponse {
  headers: Record<string, string>;
  body: string;
  bodyTruncated: boolean;
}

export interface WebhookRequest {
  url: string;
  body: string;
  /** Svc-Signature, Svc-Event-Id, ...; Host, Content-Type, Content-Length and Connection are set here. */
  headers: Record<string, string>;
  timeoutMs: number;
  livemode: boolean;
  lookup?: LookupAll;
  /** Ports refused on sandbox loopback URLs, checked again at every attempt; see `checkWebhookUrl`. */
  refusedLoopbackPorts?: ReadonlySet<number>;
  /** Ends the attempt before `timeoutMs` when cut short (its process is stopping); the outcome is then `timeout`. */
  inFlight?: InFlightAttempts;
  /**
   * Keep-alive connections by vetted address (deliveries); without them the attempt opens a connection of its own
   * and closes it (a test event, whose timings show every phase).
   */
  connections?: AttemptConnections;
}

/** Reading a little of a large answer lets small answers finish cleanly without buffering large ones. */
const RESPONSE_BODY_CAP_BYTES = 64 * 1024;

/**
 * Response headers not kept: a receiver's cookie can be a session of its own application, and the console shows
 * attempts to anyone holding the project's key.
 */
const RESPONSE_HEADERS_NOT_KEPT: ReadonlySet<string> = new Set(["set-cookie"]);

/** Headers whose value comes from the request itself, never from the caller. */
const MANAGED_HEADERS: ReadonlySet<string> = new Set(["host", "content-type", "content-length", "transfer-encoding", "connection"]);

// X.509 verification results Node reports as `error.code` when a certificate is refused.
const CERTIFICATE_ERROR_CODES: ReadonlySet<string> = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_CRL",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CRL_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CRL_NOT_YET_VALID",
  "CRL_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "ERROR_IN_CRL_LAST_UPDATE_FIELD",
  "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_CHAIN_TOO_LONG",
  "CERT_REVOKED",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
]);

const DNS_ERROR_CODES: ReadonlySet<string> = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "EAI_NODATA",
  "ENODATA",
  "ESERVFAIL",
  "EREFUSED",
]);

/** The attempt error code for a failure raised while connecting, sending or receiving. */
export function networkErrorCode(error: unknown): DeliveryFailureCode {
  if (error instanceof DeliveryFailure) return error.code;
  let code = (error as { code?: unknown } | null)?.code;
  // With several addresses tried (autoSelectFamily), Node reports an AggregateError of the attempts.
  if (typeof code !== "string" && error instanceof AggregateError) code = (error.errors[0] as { code?: unknown })?.code;
  if (typeof code !== "string") return "connection_error";
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ECONNRESET" || code === "EPIPE" || code === "ECONNABORTED") return "connection_reset";
  if (code === "ETIMEDOUT" || code === "ABORT_ERR") return "timeout";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EHOSTDOWN" || code === "ENETDOWN") {
    return "host_unreachable";
  }
  if (DNS_ERROR_CODES.has(code)) return "dns_error";
  if (CERTIFICATE_ERROR_CODES.has(code) || code === "EPROTO" || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_")) {
    return "tls_error";
  }
  return "connection_error";
}

function statusError(status: number): AttemptError | null {
  return status >= 200 && status <= 299 ? null : `http_${status}`;
}

/** Answers every lookup with the vetted address, so the connection cannot resolve the name a second time. */
function pinnedLookup(pinned: VettedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}

function buildHeaders(request: WebhookRequest, target: URL, bodyBytes: number): Record<string, string> {
  const headers: Record<string, string> = {};
  let hasUserAgent = false;
  for (const name in request.headers) {
    const value = request.headers[name]!;
    const lower = name.toLowerCase();
    if (MANAGED_HEADERS.has(lower)) continue;
    if (lower === "user-agent") hasUserAgent = true;
    http.validateHeaderName(name);
    http.validateHeaderValue(name, value);
    headers[name] = value;
  }
  if (!hasUserAgent) headers["User-Agent"] = WEBHOOK_USER_AGENT;
  headers["Host"] = target.host;
  headers["Content-Type"] = "application/json";
  headers["Content-Length"] = String(bodyBytes);
  return headers;
}

/** `work`'s outcome, or a `timeout` failure once the attempt's deadline passes first (DNS lookups cannot be cancelled). */
function beforeDeadline<T>(work: Promise<T>, deadline: AttemptDeadline): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    deadline.during(() => reject(new DeliveryFailure("timeout", "The attempt ran past its time limit.")));
    work.then(resolve, reject);
  });
}

interface Exchange {
  responseStatus: number | null;
  error: AttemptError | null;
  response: ReceivedResponse | null;
}

/** The first `bytes` of `buffer` as UTF-8 text, without a character cut in two. */
function utf8Prefix(buffer: Buffer, bytes: number): { text: string; truncated: boolean } {
  if (buffer.length <= bytes) return { text: buffer.toString("utf8"), truncated: false };
  let end = bytes;
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && (buffer[end]! & 0xc0) === 0x80) end -= 1;
  return { text: buffer.subarray(0, end).toString("utf8"), truncated: true };
}

/**
 * The request as kept with its attempt: the headers object built for this request alone (nothing changes it once
 * built), and the body as sent when it is within the kept size (shared by the deliveries of one event), else its
 * prefix. Every attempt's record holds it until its outcome is written: a copy of each would be garbage to collect.
 */
function sentRequest(url: string, headers: Record<string, string>, body: string, bodyBytes: number): SentRequest {
  if (bodyBytes <= ATTEMPT_REQUEST_BODY_KEPT_BYTES) return { url, headers, body, bodyTruncated: false };
  const kept = utf8Prefix(Buffer.from(body, "utf8"), ATTEMPT_REQUEST_BODY_KEPT_BYTES);
  return { url, headers, body: kept.text, bodyTruncated: kept.truncated };
}

function responseHeaders(res: http.IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    headers[name] = RESPONSE_HEADERS_NOT_KEPT.has(name) ? "(not kept)" : Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

type PhaseTimings = Omit<AttemptTimings, "dnsMs">;

function elapsedSince(start: number): number {
  return Math.round(performance.now() - start);
}

/**
 * Sends the request to the pinned address and waits for the whole (capped) answer. Resolves, never rejects. A kept
 * connection that the receiver closed while it was idle fails as the request is written, before any answer: the
 * request is then sent once more, on a connection of its own (the receiver did not read it).
 */
async function exchange(attempt: ExchangeInput): Promise<Exchange> {
  const { checked, target, pinned, request } = attempt;
  const secure = target.protocol === "https:";
  const agent = request.connections?.agentFor({ secure, pinned, port: checked.port, hostname: checked.hostname }) ?? false;
  const outcome = await exchangeOn(agent, attempt);
  if (outcome !== STALE_CONNECTION) return outcome;
  return (await exchangeOn(false, attempt)) as Exchange;
}

/** An attempt's request, ready to send to its pinned address. */
interface ExchangeInput {
  checked: CheckedWebhookUrl;
  target: URL;
  pinned: VettedAddress;
  request: WebhookRequest;
  headers: Record<string, string>;
  deadline: AttemptDeadline;
  timings: PhaseTimings;
}

/** What `exchangeOn` answers when a kept connection turned out closed before the request reached the receiver. */
const STALE_CONNECTION = Symbol("stale connection");

function exchangeOn(agent: http.Agent | false, attempt: ExchangeInput): Promise<Exchange | typeof STALE_CONNECTION> {
  const { checked, target, pinned } = attempt;
  const secure = target.protocol === "https:";
  const options: https.RequestOptions = {
    method: "POST",
    host: checked.hostname,
    port: checked.port,
    path: `${target.pathname}${target.search}`,
    headers: attempt.headers,
    // A pool of the vetted address, or a connection of this attempt alone: never one opened to another address.
    agent,
    lookup: pinnedLookup(pinned),
    ...(secure
      ? {
          // SNI and certificate check use the host name; an IP literal is checked against itself without SNI.
          servername: checked.literalAddress === null ? checked.hostname : "",
          rejectUnauthorized: true,
        }
      : {}),
  };
  return new Promise<Exchange | typeof STALE_CONNECTION>((resolve) => new ExchangeRun(attempt, resolve).start(secure, options));
}

/** The error a request is destroyed with when its attempt's deadline passes. */
const DEADLINE_PASSED = Object.assign(new Error("The attempt ran past its time limit."), { code: "ABORT_ERR" });

/**
 * One request on one connection, read to its (capped) answer. Its listeners are methods and inline arrows rather
 * than named closures: on the path of every delivery, each named function made per attempt costs a property
 * definition as the service runs (tsx keeps function names).
 */
class ExchangeRun {
  private responseStatus: number | null = null;
  private headersReceived: Record<string, string> | null = null;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private received = 0;
  private outcome: AttemptError | null = null;
  private settled = false;
  /** When the connection was ready (TCP, or TLS over https), for the first byte's time. */
  private readyAt: number | null = null;
  private req: http.ClientRequest | null = null;

  constructor(
    private readonly attempt: ExchangeInput,
    private readonly resolve: (outcome: Exchange | typeof STALE_CONNECTION) => void,
  ) {}

  start(secure: boolean, options: https.RequestOptions): void {
    const req = (secure ? https : http).request(options, (res) => this.onResponse(res));
    this.req = req;
    // Phases from the socket's own events; the pinned lookup answers at once, so DNS is timed by the caller.
    req.on("socket", (socket) => this.onSocket(socket, secure));
    req.on("error", (error) => this.fail(error));
    this.attempt.deadline.during(() => req.destroy(DEADLINE_PASSED));
    req.end(this.attempt.request.body);
  }

  private onSocket(socket: Socket, secure: boolean): void {
    // A kept connection is ready at once: no connect (nor TLS) phase of this attempt.
    if (this.req!.reusedSocket) {
      this.readyAt = performance.now();
      return;
    }
    const { timings } = this.attempt;
    const openedAt = performance.now();
    socket.once("connect", () => {
      timings.connectMs = elapsedSince(openedAt);
      this.readyAt = performance.now();
    });
    if (secure) {
      socket.once("secureConnect", () => {
        if (this.readyAt !== null) timings.tlsMs = elapsedSince(this.readyAt);
        this.readyAt = performance.now();
      });
    }
  }

  private onResponse(res: http.IncomingMessage): void {
    if (this.readyAt !== null) this.attempt.timings.firstByteMs = elapsedSince(this.readyAt);
    this.responseStatus = res.statusCode ?? null;
    this.headersReceived = responseHeaders(res);
    this.outcome = this.responseStatus === null ? "connection_error" : statusError(this.responseStatus);
    res.on("data", (chunk: Buffer) => this.onData(res, chunk));
    res.on("end", () => this.settle(this.outcome));
    res.on("error", (error) => this.fail(error));
    // A response cut off mid-body may close without an error event; it is a reset, or a timeout if it timed out.
    res.on("close", () => {
      if (!res.complete) this.fail(Object.assign(new Error("The response was cut off."), { code: "ECONNRESET" }));
    });
  }

  private onData(res: http.IncomingMessage, chunk: Buffer): void {
    // One byte past what is kept tells a longer body from one of exactly that size.
    if (this.keptBytes <= ATTEMPT_RESPONSE_BODY_KEPT_BYTES) {
      const part = chunk.subarray(0, ATTEMPT_RESPONSE_BODY_KEPT_BYTES + 1 - this.keptBytes);
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    this.received += chunk.length;
    if (this.received > RESPONSE_BODY_CAP_BYTES) {
      this.settle(this.outcome);
      res.destroy();
    }
  }

  private fail(error: unknown): void {
    const code = this.attempt.deadline.passed ? "timeout" : networkErrorCode(error);
    if (code === "connection_reset" && this.req!.reusedSocket && this.headersReceived === null && !this.settled) {
      this.settled = true;
      this.resolve(STALE_CONNECTION);
      return;
    }
    this.settle(code);
  }

  private settle(error: AttemptError | null): void {
    if (this.settled) return;
    this.settled = true;
    this.attempt.deadline.phaseDone();
    let response: ReceivedResponse | null = null;
    if (this.headersReceived !== null) {
      const body = utf8Prefix(Buffer.concat(this.kept), ATTEMPT_RESPONSE_BODY_KEPT_BYTES);
      response = { headers: this.headersReceived, body: body.text, bodyTruncated: body.truncated };
    }
    this.resolve({ responseStatus: this.responseStatus, error, response });
  }
}

/**
 * Performs one delivery attempt. Network outcomes are returned, never thrown; only programming errors
 * (an invalid header, a non-positive timeout) throw.
 */
export async function postWebhook(request: WebhookRequest): Promise<AttemptResult> {
  if (!Number.isFinite(request.timeoutMs) || request.timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a positive number, got ${request.timeoutMs}.`);
  }
  const run: AttemptRun = { started: performance.now(), timings: { dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null } };

  let checked: CheckedWebhookUrl;
  try {
    checked = checkWebhookUrl(request.url, {
      livemode: request.livemode,
      ...(request.refusedLoopbackPorts ? { refusedLoopbackPorts: request.refusedLoopbackPorts } : {}),
    });
  } catch (error) {
    // The URL rules name what they refuse (the address class of an IP literal, a port, an internal name).
    return attemptResult(run, null, "ssrf_blocked", describeError(error).message);
  }
  const target = new URL(checked.url);
  const bodyBytes = Buffer.byteLength(request.body);
  const headers = buildHeaders(request, target, bodyBytes);
  run.sent = sentRequest(checked.url, headers, request.body, bodyBytes);

  const deadline = new AttemptDeadline(request.timeoutMs);
  // Cut short, the attempt ends as at its deadline.
  request.inFlight?.add(deadline.end);
  try {
    let pinned: VettedAddress;
    const lookupStarted = performance.now();
    try {
      pinned = await beforeDeadline(vetHost(checked, request), deadline);
      deadline.phaseDone();
      if (checked.literalAddress === null) run.timings.dnsMs = elapsedSince(lookupStarted);
    } catch (error) {
      const code = networkErrorCode(error);
      if (checked.literalAddress === null && code !== "timeout") run.timings.dnsMs = elapsedSince(lookupStarted);
      return attemptResult(run, null, code, code === "ssrf_blocked" && error instanceof DeliveryFailure ? error.detail : null);
    }
    const outcome = await exchange({ checked, target, pinned, request, headers, deadline, timings: run.timings });
    return attemptResult(run, outcome.responseStatus, outcome.error, null, outcome.response);
  } finally {
    deadline.dispose();
    request.inFlight?.delete(deadline.end);
  }
}

/** An attempt under way: when it started, its phases so far, and its request once built. */
interface AttemptRun {
  started: number;
  timings: AttemptTimings;
  sent?: SentRequest;
}

function attemptResult(
  run: AttemptRun,
  responseStatus: number | null,
  error: AttemptError | null,
  errorDetail: string | null = null,
  response: ReceivedResponse | null = null,
): AttemptResult {
  return {
    responseStatus,
    error,
    durationMs: elapsedSince(run.started),
    timings: run.timings,
    errorDetail,
    ...(run.sent ? { request: run.sent } : {}),
    ...(response ? { response } : {}),
  };
}
