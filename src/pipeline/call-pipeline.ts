// The one path every public call takes, whatever its transport (REST, Connect, gRPC-Web, gRPC): admission
// (key, version header, rate limit), the transport's own checks that store nothing, the Idempotency-Key claim,
// then either the stored answer replayed or the method run and its answer stored. Transports adapt their
// request to a `Call` and render what this answers or throws; they hold no step of their own.
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { IdempotencyGuard, type Transport } from "../access/idempotency-guard.ts";
import type { CreationReservation } from "../access/creation-reservation.ts";
import type { Principal } from "../access/principal.ts";
import type { RequestGate } from "../access/request-gate.ts";
import type { MethodAccessCheck } from "../api/method-access.ts";
import { describeError, svcError, type DescribedError } from "../domain/errors.ts";
import type { StoredResponse } from "../store/idempotency-repository.ts";
import {
  failureHeaders,
  identityHeaders,
  RATE_LIMIT_LIMIT_HEADER,
  rateLimitHeaders,
  REPLAYED_HEADER,
  REQUEST_ID_HEADER,
} from "./response-headers.ts";

/** One public call as the pipeline sees it; `headers` collects the response headers as the steps run. */
export interface Call {
  requestId: string;
  transport: Transport;
  method: DescMethod;
  authorization: string | null | undefined;
  /** The `Svc-Version` header, if sent. */
  version: string | null | undefined;
  clientAddress: string;
  idempotencyKey: string | null | undefined;
  /** Whether the method takes an Idempotency-Key (it changes state). */
  takesIdempotencyKey: boolean;
  headers: Record<string, string>;
}

/** What a transport supplies: how to run the method and how its answers are stored and replayed. */
export interface CallHandler<R> {
  /**
   * Checks after admission whose refusals are never stored (the REST body's JSON); answers what identifies
   * the request for its Idempotency-Key (method, route, body).
   */
  prepare(): (string | Uint8Array)[];
  /** Runs the method; `reservation` is set when the call carries an Idempotency-Key. */
  execute(principal: Principal, reservation: CreationReservation | null): Promise<R>;
  /** The stored form of a successful answer. */
  store(result: R): { status: number; body: unknown };
  /** The stored form of a refusal the method answered. */
  storeError(described: DescribedError, requestId: string): { status: number; body: unknown };
  /** The answer to give for a stored one (may throw the stored error). */
  replay(stored: StoredResponse, principal: Principal): R | Promise<R>;
}

/** A refused call: the service's error, what it means, and every header its answer carries. */
export class CallFailure extends Error {
  constructor(
    readonly error: ConnectError,
    readonly described: DescribedError,
    readonly headers: Record<string, string>,
  ) {
    super(error.message);
  }
}

export class CallPipeline {
  constructor(
    private readonly gate: RequestGate,
    private readonly idempotency: IdempotencyGuard,
    /** Hears of failures that are not the service's own errors (bugs, outages), with the call's request id. */
    private readonly onInternalError: (error: unknown, requestId: string) => void,
    /** Which keys may call the method (sandbox-only routes, live settings): checked right after admission. */
    private readonly checkAccess: MethodAccessCheck = async () => {},
  ) {}

  newCall(fields: Omit<Call, "headers">): Call {
    return { ...fields, headers: identityHeaders(fields.requestId) };
  }

  /** Runs the call; a refusal is thrown as a CallFailure. Successful answers carry `call.headers`. */
  async run<R>(call: Call, handler: CallHandler<R>): Promise<R> {
    try {
      return await this.runSteps(call, handler);
    } catch (error) {
      throw this.failure(call, error);
    }
  }

  /**
   * A request refused before it could be authenticated (no route, body too large, unreadable HTTP): counted
   * against the client address. If counting fails too (the database is down), the refusal still answers.
   */
  async refuseAnonymous(requestId: string, clientAddress: string, error: unknown): Promise<CallFailure> {
    const headers = identityHeaders(requestId);
    try {
      Object.assign(headers, rateLimitHeaders(await this.gate.countAnonymous(clientAddress)));
    } catch (countError) {
      this.onInternalError(countError, requestId);
    }
    return this.failure({ requestId, headers }, error);
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
    const failure = error instanceof ConnectError ? error : svcError("internal_error");
    const described = describeError(failure);
    if (failure !== error || (described.code === "internal_error" && (failure.code === Code.Internal || failure.code === Code.Unknown))) {
      this.onInternalError(error, call.requestId);
    }
    const headers = call.headers;
    if (headers[RATE_LIMIT_LIMIT_HEADER] === undefined) Object.assign(headers, rateLimitHeaders(this.gate.uncounted()));
    Object.assign(headers, failureHeaders(described, headers));
    return new CallFailure(failure, described, headers);
  }

  private async runSteps<R>(call: Call, handler: CallHandler<R>): Promise<R> {
    const admission = await this.gate.admit({ authorization: call.authorization, version: call.version, clientAddress: call.clientAddress });
    Object.assign(call.headers, rateLimitHeaders(admission.rateLimit));
    if (admission.error) throw admission.error;
    const principal = admission.principal!;
    await this.checkAccess(call.method, principal);
    const identity = handler.prepare();
    const key = call.idempotencyKey;
    if (key == null || !call.takesIdempotencyKey) return handler.execute(principal, null);

    const fingerprint = IdempotencyGuard.fingerprint(...identity);
    const claim = await this.idempotency.claim(principal, call.transport, key, fingerprint);
    if (claim.replay) {
      // The original request id replaces this call's, so the replay is the same answer throughout.
      call.headers[REQUEST_ID_HEADER] = claim.replay.request_id;
      call.headers[REPLAYED_HEADER] = "true";
      return await handler.replay(claim.replay, principal);
    }
    const answerWrites = claim.reservation!.answerWrites;
    let result: R;
    try {
      result = await handler.execute(principal, claim.reservation);
    } catch (error) {
      const described = describeError(error);
      const stored = { ...handler.storeError(described, call.requestId), request_id: call.requestId };
      await Promise.all([this.idempotency.settle(claim.recordId, stored), ...answerWrites]);
      throw error;
    }
    // The method's remaining writes (answerWrites) and the storing of its answer go to the database together.
    await Promise.all([this.idempotency.settle(claim.recordId, { ...handler.store(result), request_id: call.requestId }), ...answerWrites]);
    return result;
  }
}
