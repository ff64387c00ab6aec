// The one path every call of a service method takes, whatever its door (REST, Connect, gRPC-Web, gRPC, the
// dashboard, the admin API): admission (key, version header, rate limit), the door's own checks that store
// nothing, the Idempotency-Key claim, then either the stored answer replayed or the method run and its answer
// stored. Doors adapt their request to a `Call` and render what this answers or throws; they hold no step of
// their own. One key space: a key names the method and its request as decoded, never the door or its bytes.
// Every call a project's key makes is recorded here, once, in the request log (request-log-entry.ts).
import { create, fromBinary, isMessage, toBinary, type DescMethod, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type HandlerContext } from "@connectrpc/connect";
import { creationReservationKey } from "../access/creation-reservation.ts";
import { IdempotencyGuard } from "../access/idempotency-guard.ts";
import { principalKey, type Principal } from "../access/principal.ts";
import type { RequestGate } from "../access/request-gate.ts";
import { StreamSlots } from "../access/stream-slots.ts";
import type { MethodAccessCheck } from "../api/method-access.ts";
import type { ServiceRegistry } from "../api/service-registry.ts";
import { describeError, ERROR_CATALOGUE, SvcError, svcError, type DescribedError, type ErrorCode } from "../domain/errors.ts";
import { systemClock, type Clock } from "../domain/clock.ts";
import type { RequestLogSource } from "../domain/request-logs.ts";
import { DEFAULT_MAX_STREAMS_PER_KEY } from "../domain/limits.ts";
import type { StoredResponse } from "../store/idempotency-repository.ts";
import { requestLogEntry, type RequestLogSink, type CallRoute } from "./request-log-entry.ts";
import {
  failureHeaders,
  identityHeaders,
  RATE_LIMIT_LIMIT_HEADER,
  rateLimitHeaders,
  REPLAYED_HEADER,
  REQUEST_ID_HEADER,
} from "./response-headers.ts";
import { identityForm } from "./request-identity.ts";

/** Where a call came in. */
export type Door = "rest" | "connect" | "grpc" | "dashboard" | "admin";

/**
 * Who presents the call: an API key in an Authorization header; the key of a dashboard session, known by its
 * hash; or the operator, whose admin token the door has already compared (the admin API, the operator console),
 * possibly reading a project as its keys see it (`actingAs`).
 */
export type Caller =
  | { kind: "bearer"; authorization: string | null | undefined }
  | { kind: "session-key"; keyHash: string; livemode: boolean }
  | { kind: "admin"; actingAs?: Principal };

/** One call as the pipeline sees it; `headers` collects the response headers as the steps run. */
export interface Call {
  requestId: string;
  door: Door;
  method: DescMethod;
  caller: Caller;
  /** The `Svc-Version` header, if sent. */
  version: string | null | undefined;
  clientAddress: string;
  idempotencyKey: string | null | undefined;
  /** Whether the method takes an Idempotency-Key (it changes state). */
  takesIdempotencyKey: boolean;
  /** The values of the method's context, made once by the door: the pipeline puts the principal and the reservation in them. */
  values: ContextValues;
  /**
   * The method's context over those values, for work done outside the method (bringing a replay up to date). A
   * function: the RPC door makes it only when a replay needs it, not on every call.
   */
  context: () => HandlerContext;
  headers: Record<string, string>;
  /** When the call reached its door (performance.now()). */
  started: number;
  /** A REST call's verb, path, route and success status, as its request log shows them. */
  route?: CallRoute;
  /**
   * Whether the door runs the call again when another call holds its key (the dashboard waits for a double post's
   * first answer): that refusal is not the call's answer, and is not logged.
   */
  retriedWhenInProgress?: boolean;
}

/**
 * The request as the method takes it, or why it cannot become one: a decoding refusal (a REST body's unknown
 * field or wrong type) is thrown after the key is claimed, as the contract orders validation after the key,
 * and `raw` (the request as sent) stands for the request in the key's fingerprint meanwhile.
 */
export type DecodedRequest = { message: Message } | { refusal: unknown; raw: string | Uint8Array };

/** What a door supplies: its own checks and decoding, how it runs the method, and its form of an answer. */
export interface CallHandler<R> {
  /** Checks after admission whose refusals are never stored (the REST body's JSON), then the decoded request. */
  decode(): DecodedRequest;
  /** Runs the method with the call's context. */
  execute(request: Message): Promise<R>;
  /** The method's response message in the door's answer. */
  answerOf(result: R): Message;
  /** The door's answer for a replayed response message. */
  replayed(response: Message): R;
}

/** What a door supplies for a server-streaming method: its decoding, and how it opens the method's stream. */
export interface StreamHandler<T> {
  decode(): DecodedRequest;
  /** Starts the method with the call's context; its messages are read as the stream goes. */
  open(request: Message): Promise<AsyncIterable<T>>;
  /**
   * A failure while the messages flow in the transport's form (it is past the transport's own catch by then). Given
   * here rather than by a wrapper of the transport's around the messages: one layer less for every message.
   */
  asTransportError(failure: CallFailure): unknown;
}

/** How an answer is kept under its key: the response message, or the refusal the method answered. */
interface StoredAnswer {
  /** base64 of the response message in the binary format. */
  message?: string;
  error?: { code: ErrorCode; message: string; param?: string; metadata: Record<string, string> };
}

/** A refused call: the service's error, what it means, and every header of its answer (its request id included). */
export class CallFailure extends Error {
  constructor(
    /** A catalogue error, or one of Connect's own (a deadline, a cancellation) that the RPC doors answer as it is. */
    readonly error: SvcError | ConnectError,
    readonly described: DescribedError,
    readonly headers: Record<string, string>,
  ) {
    super(error.message);
  }

  /** The request id the answer carries: a replayed refusal keeps the one of the call that stored it. */
  get requestId(): string {
    return this.headers[REQUEST_ID_HEADER]!;
  }
}

export interface CallPipelineOptions {
  gate: RequestGate;
  idempotency: IdempotencyGuard;
  registry: ServiceRegistry;
  /** Hears of failures that are not the service's own errors (bugs, outages), with the call's request id. */
  onInternalError: (error: unknown, requestId: string) => void;
  /** Which keys may call the method (sandbox-only routes, live settings): checked right after admission. */
  checkAccess?: MethodAccessCheck;
  /** Where each call of a project's key is recorded; none: calls are not recorded. */
  requestLog?: RequestLogSink;
  clock?: Clock;
  /** The streams each key may hold open at once; by default the contract's default number. */
  streamSlots?: StreamSlots;
}

/** Who presents a call refused before the pipeline (no route, body too large): logged if its key names a project. */
export interface RefusedCallShape {
  authorization: string | null | undefined;
  source: RequestLogSource;
  route?: CallRoute;
  method?: DescMethod;
  durationMs: number;
  /**
   * The catalogue code the log files the refusal under when its error has none of its own: an unknown RPC
   * method answers Unimplemented, which is REST's `route_not_found` (404).
   */
  loggedAs?: ErrorCode;
}

/** Refusals of a key some project holds: the call is in that project's log. */
const HELD_KEY_REFUSALS = new Set<ErrorCode>(["api_key_revoked", "organization_suspended", "live_not_enabled"]);

/** The request log's source of each door; the operator's calls (admin) are in no project's log. */
const SOURCE_OF_DOOR: Record<Door, RequestLogSource | null> = {
  rest: "rest",
  connect: "connect",
  grpc: "grpc",
  dashboard: "dashboard",
  admin: null,
};

/** The idempotency scope of an operator's calls, apart from every project's. */
const ADMIN_SCOPE = "admin";

export class CallPipeline {
  private readonly gate: RequestGate;
  private readonly idempotency: IdempotencyGuard;
  private readonly registry: ServiceRegistry;
  private readonly onInternalError: (error: unknown, requestId: string) => void;
  private readonly checkAccess: MethodAccessCheck;
  private readonly requestLog: RequestLogSink | null;
  private readonly clock: Clock;
  private readonly streamSlots: StreamSlots;

  constructor(options: CallPipelineOptions) {
    this.gate = options.gate;
    this.idempotency = options.idempotency;
    this.registry = options.registry;
    this.onInternalError = options.onInternalError;
    this.checkAccess = options.checkAccess ?? (async () => {});
    this.requestLog = options.requestLog ?? null;
    this.clock = options.clock ?? systemClock;
    this.streamSlots = options.streamSlots ?? new StreamSlots(DEFAULT_MAX_STREAMS_PER_KEY);
  }

  newCall(fields: Omit<Call, "headers" | "started">): Call {
    return { ...fields, headers: identityHeaders(fields.requestId), started: performance.now() };
  }

  /** Runs the call; a refusal is thrown as a CallFailure. Successful answers carry `call.headers`. */
  async run<R>(call: Call, handler: CallHandler<R>): Promise<R> {
    let result: R;
    try {
      result = await this.runSteps(call, handler);
    } catch (error) {
      const failure = this.failure(call, error);
      if (!(call.retriedWhenInProgress && failure.described.code === "idempotency_in_progress")) this.record(call, failure);
      throw failure;
    }
    this.record(call, null);
    return result;
  }

  /**
   * The call's entry in its project's request log, handed to the writer (never awaited). Calls without a key's
   * principal (the operator's, or refused before a key was accepted) belong to no project and are not logged.
   */
  private record(call: Call, failure: CallFailure | null): void {
    const source = SOURCE_OF_DOOR[call.door];
    const sink = this.requestLog;
    if (!sink || !source || call.caller.kind === "admin") return;
    const durationMs = performance.now() - call.started;
    const createdAt = this.clock();
    const principal = call.values.get(principalKey);
    if (principal) {
      sink.record(logEntryOf(call, source, failure, principal, durationMs, createdAt));
    } else if (failure && HELD_KEY_REFUSALS.has(failure.described.code) && call.caller.kind === "bearer" && call.caller.authorization) {
      // A known key refused (revoked, its organization suspended): its holder is looked up after the answer.
      this.gate.holderOf(call.caller.authorization).then(
        (holder) => holder && sink.record(logEntryOf(call, source, failure, holder, durationMs, createdAt)),
        () => {},
      );
    }
  }

  /**
   * Opens a server-streaming call: admitted as every call is (key, version, the open counted against the rate
   * limit, access), then holding one of the key's stream slots until the stream ends. A stream changes nothing, so
   * no Idempotency-Key is claimed. The open ends with the stream's first message (StreamEvents sends one at once):
   * a refusal until then (the key, an unknown cursor) is thrown as a CallFailure and logged as the call's answer;
   * one while the stream runs (the database gone) ends it as the same CallFailure, an unexpected one as
   * internal_error. The request log records the open and its outcome, not the stream's length.
   */
  async openStream<T>(call: Call, handler: StreamHandler<T>): Promise<AsyncIterable<T>> {
    let release = () => {};
    let messages: AsyncIterator<T>;
    let first: IteratorResult<T>;
    try {
      const { principal } = await this.admit(call);
      call.values.set(principalKey, principal);
      if (principal) release = this.streamSlots.take(principal.apiKeyId);
      const decoded = handler.decode();
      if ("refusal" in decoded) throw decoded.refusal;
      messages = (await handler.open(decoded.message))[Symbol.asyncIterator]();
      first = await messages.next();
    } catch (error) {
      release();
      const failure = this.failure(call, error);
      this.record(call, failure);
      throw failure;
    }
    this.record(call, null);
    if (first.done) release();
    return this.streamed(call, first, messages, release, handler.asTransportError);
  }

  /**
   * The method's messages from the first, the slot given back when they end, fail (thrown in the transport's form)
   * or the reader stops.
   */
  private streamed<T>(
    call: Call,
    first: IteratorResult<T>,
    messages: AsyncIterator<T>,
    release: () => void,
    asTransportError: (failure: CallFailure) => unknown,
  ): AsyncIterable<T> {
    let pending: IteratorResult<T> | null = first;
    // Made once for the stream, not for each message: without an async function's own promise, and without new
    // closures, as this passes every message of every stream.
    const read = (result: IteratorResult<T>) => {
      if (result.done) release();
      return result;
    };
    const failed = (error: unknown) => {
      release();
      throw asTransportError(this.failure(call, error));
    };
    return {
      [Symbol.asyncIterator]() {
        return {
          next() {
            if (pending !== null) {
              const result = pending;
              pending = null;
              return Promise.resolve(result);
            }
            return messages.next().then(read, failed);
          },
          async return(value?: unknown) {
            release();
            await messages.return?.();
            return { done: true, value } as IteratorReturnResult<T>;
          },
        };
      },
    };
  }

  /**
   * A request refused before it could be authenticated (no route, body too large, unreadable HTTP): counted
   * against the client address. If counting fails too (the database is down), the refusal still answers.
   */
  async refuseAnonymous(requestId: string, clientAddress: string, error: unknown, shape?: RefusedCallShape): Promise<CallFailure> {
    const headers = identityHeaders(requestId);
    try {
      Object.assign(headers, rateLimitHeaders(await this.gate.countAnonymous(clientAddress)));
    } catch (countError) {
      this.onInternalError(countError, requestId);
    }
    const failure = this.failure({ requestId, headers }, error);
    if (shape) this.recordRefused(requestId, failure, shape);
    return failure;
  }

  /**
   * A call refused before the pipeline is logged when the key it presents names a project: the key is checked
   * after the refusal is answered (off its path), and a key that does not pass is not logged.
   */
  private recordRefused(requestId: string, failure: CallFailure, shape: RefusedCallShape): void {
    const sink = this.requestLog;
    if (!sink || !shape.authorization) return;
    const createdAt = this.clock();
    this.gate.holderOf(shape.authorization).then(
      (principal) =>
        principal &&
        sink.record(
          requestLogEntry({
            logId: requestId,
            source: shape.source,
            method: shape.method ?? null,
            route: shape.route,
            principal,
            idempotencyKey: null,
            replayed: false,
            refusal: shape.loggedAs
              ? { status: ERROR_CATALOGUE[shape.loggedAs].status, code: shape.loggedAs }
              : { status: failure.described.definition.status, code: failure.described.code },
            durationMs: shape.durationMs,
            createdAt,
          }),
        ),
      () => {},
    );
  }

  /**
   * A route that needs no key (the OpenAPI document): the version header and the client address's quota.
   * Answers the headers of the response, or throws the CallFailure.
   */
  async admitAnonymous(requestId: string, clientAddress: string, version: string | null | undefined): Promise<Record<string, string>> {
    const headers = identityHeaders(requestId);
    try {
      const admission = await this.gate.admitAnonymous({ version, clientAddress });
      Object.assign(headers, rateLimitHeaders(admission.rateLimit));
      if (admission.error) throw admission.error;
      return headers;
    } catch (error) {
      throw this.failure({ requestId, headers }, error);
    }
  }

  /**
   * The service's own error for any failure, with every header of its answer: an unexpected one is reported
   * and becomes `internal_error`, since its message must not reach the caller.
   */
  private failure(call: Pick<Call, "requestId" | "headers">, error: unknown): CallFailure {
    if (error instanceof CallFailure) return error;
    const failure = error instanceof SvcError || error instanceof ConnectError ? error : svcError("internal_error");
    const described = describeError(failure);
    const connectOwn = failure instanceof ConnectError && failure.code !== Code.Internal && failure.code !== Code.Unknown;
    if (failure !== error || (described.code === "internal_error" && !connectOwn)) {
      this.onInternalError(error, call.requestId);
    }
    const headers = call.headers;
    if (headers[RATE_LIMIT_LIMIT_HEADER] === undefined) Object.assign(headers, rateLimitHeaders(this.gate.uncounted()));
    Object.assign(headers, failureHeaders(described, headers));
    return new CallFailure(failure, described, headers);
  }

  /** The caller's principal (null for the operator) and the scope its Idempotency-Keys live in. */
  private async admit(call: Call): Promise<{ principal: Principal | null; scope: string }> {
    if (call.caller.kind === "admin") return { principal: call.caller.actingAs ?? null, scope: ADMIN_SCOPE };
    const admission = await this.gate.admit({ caller: call.caller, version: call.version, clientAddress: call.clientAddress });
    Object.assign(call.headers, rateLimitHeaders(admission.rateLimit));
    // A key refused for its version header or its rate limit is known: the refusal is in its project's log.
    if (admission.principal) call.values.set(principalKey, admission.principal);
    if (admission.error) throw admission.error;
    const principal = admission.principal!;
    await this.checkAccess(call.method, principal);
    return { principal, scope: `${principal.projectId}|${principal.livemode ? "live" : "test"}` };
  }

  private async runSteps<R>(call: Call, handler: CallHandler<R>): Promise<R> {
    const { principal, scope } = await this.admit(call);
    const values = call.values.set(principalKey, principal);
    const decoded = handler.decode();
    const key = call.idempotencyKey;
    if (key == null || !call.takesIdempotencyKey) {
      if ("refusal" in decoded) throw decoded.refusal;
      return handler.execute(decoded.message);
    }

    const claim = await this.idempotency.claim(scope, key, this.fingerprint(call.method, decoded));
    if (claim.replay) return this.replay(call, handler, claim.replay);
    const reservation = claim.reservation!;
    values.set(creationReservationKey, reservation);
    let result: R;
    try {
      if ("refusal" in decoded) throw decoded.refusal;
      result = await handler.execute(decoded.message);
    } catch (error) {
      const described = describeError(error);
      const refusal: StoredAnswer = {
        error: {
          code: described.code,
          message: described.message,
          ...(described.param !== undefined ? { param: described.param } : {}),
          metadata: described.metadata,
        },
      };
      const stored = { status: described.definition.status, body: refusal, request_id: call.requestId };
      await Promise.all([this.idempotency.settle(claim.recordId, stored), ...reservation.answerWrites]);
      throw error;
    }
    // The method's remaining writes (answerWrites) and the storing of its answer go to the database together.
    const output = call.method.output;
    const response = handler.answerOf(result);
    const message = this.registry.keptForm(call.method, isMessage(response, output) ? response : create(output, response as never));
    const answer: StoredAnswer = { message: Buffer.from(toBinary(output, message)).toString("base64") };
    await Promise.all([
      this.idempotency.settle(claim.recordId, { status: 200, body: answer, request_id: call.requestId }),
      ...reservation.answerWrites,
    ]);
    return result;
  }

  /**
   * What identifies a request under its key: the method and its decoded message (path parameters included, fields
   * in their canonical binary form, unknown fields left out, money in its exact fields), so the same request through
   * any door is the same.
   */
  private fingerprint(method: DescMethod, decoded: DecodedRequest): string {
    if ("refusal" in decoded) return IdempotencyGuard.fingerprint(method.parent.typeName, method.name, "undecodable", decoded.raw);
    const identity = identityForm(method.input, decoded.message);
    return IdempotencyGuard.fingerprint(method.parent.typeName, method.name, toBinary(method.input, identity, { writeUnknownFields: false }));
  }

  /** The stored answer again, with its original request id and `Idempotent-Replayed: true`, in the door's form. */
  private async replay<R>(call: Call, handler: CallHandler<R>, stored: StoredResponse): Promise<R> {
    call.headers[REQUEST_ID_HEADER] = stored.request_id;
    call.headers[REPLAYED_HEADER] = "true";
    const answer = stored.body as StoredAnswer;
    if (answer.error) {
      const { code, message, param, metadata } = answer.error;
      throw svcError(code, message, { ...(param !== undefined ? { param } : {}), metadata });
    }
    const storedMessage = fromBinary(call.method.output, Buffer.from(answer.message ?? "", "base64"));
    return handler.replayed(await this.registry.refreshReplay(call.method, storedMessage, call.context()));
  }
}

/**
 * A call's request log entry, for the project `principal` acts in. A function of the module rather than a closure
 * made per call: the service runs through tsx with names kept, which names every such closure as it is made.
 */
function logEntryOf(call: Call, source: RequestLogSource, failure: CallFailure | null, principal: Principal, durationMs: number, createdAt: Date) {
  return requestLogEntry({
    logId: call.requestId,
    source,
    method: call.method,
    route: call.route,
    principal,
    idempotencyKey: call.takesIdempotencyKey ? call.idempotencyKey : null,
    replayed: call.headers[REPLAYED_HEADER] === "true",
    refusal: failure ? { status: failure.described.definition.status, code: failure.described.code } : null,
    durationMs,
    createdAt,
  });
}
