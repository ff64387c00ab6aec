// The contract between the dashboard's shell (dashboard-routes.ts: sessions, CSRF, sign-in) and its two consoles:
// a console registers pages and actions; each handler gets a context whose principal was checked on this request.
import type { DescMessage, DescMethod, DescMethodServerStreaming, DescMethodUnary, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { Code } from "@connectrpc/connect";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ApiKeyAuthenticator } from "../access/api-key-authenticator.ts";
import type { Principal } from "../access/principal.ts";
import type { RateLimiter } from "../access/rate-limiter.ts";
import type { ServiceRegistry } from "../api/service-registry.ts";
import type { Clock } from "../domain/clock.ts";
import type { CallPipeline } from "../pipeline/call-pipeline.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { ConsoleQueries } from "../store/console-queries.ts";
import type { DashboardSessionDocument, DashboardSessionRepository } from "../store/dashboard-session-repository.ts";
import type { Flash, Shell } from "./layout.ts";

export interface DashboardOptions {
  registry: ServiceRegistry;
  sessions: DashboardSessionRepository;
  queries: ConsoleQueries;
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
  adminToken: string;
  clock: Clock;
  /** "auto": Secure when `X-Forwarded-Proto` says https; "always": on every answer. */
  secureCookie: "auto" | "always";
  /** Sign-in attempts per client address per 60 s. */
  signInLimit: number;
  /**
   * The simulated SMS provider's latest messages, oldest first, when it is the provider: the console shows a
   * project's own (its users' phones) so live phone verification can be finished locally. A real provider shows none.
   */
  smsOutbox?: () => readonly { to: string; body: string; sentAt: Date }[];
  /** The API's call pipeline: every console call passes it, as the session's key or as the operator. */
  pipeline: CallPipeline;
  /** Counts and logs one console call (its method, and its Connect code: null on success), as RPC calls are. */
  recordCall: (call: { requestId: string; method: DescMethod; code: Code | null; durationMs: number }) => void;
}

export type ConsoleKind = "project" | "operator";

export interface ConsoleContext {
  request: FastifyRequest;
  reply: FastifyReply;
  params: Record<string, string>;
  query: Record<string, string>;
  /** The posted form (empty for pages). */
  form: URLSearchParams;
  session: DashboardSessionDocument;
  csrf: string;
  flash: Flash | null;
  /** Project sessions: the API key's principal, checked again on this request. */
  principal: Principal | null;
  scope: TenantScope | null;
  /** Calls a service method in process, as the API's transports do, with this session's principal. */
  call<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, init: MessageInitShape<I>): Promise<MessageShape<O>>;
  /** The same as another principal: the operator reading a project's settings as its clients see them. */
  callAs<I extends DescMessage, O extends DescMessage>(
    principal: Principal,
    method: DescMethodUnary<I, O>,
    init: MessageInitShape<I>,
  ): Promise<MessageShape<O>>;
  /** Opens a server-streaming method in process through the pipeline, with this session's principal, until `signal`. */
  stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    init: MessageInitShape<I>,
    signal: AbortSignal,
  ): Promise<AsyncIterable<MessageShape<O>>>;
  shell(title: string, section?: string): Shell;
}

/** One server-sent event: its `id` (what a reconnecting browser sends back as Last-Event-ID), name and data. */
export interface ServerSentEvent {
  id?: string;
  event: string;
  data: string;
}

/** What an action answers: a redirect to a page (with a notice), or a page of its own (a secret shown once). */
export type ActionOutcome = { redirect: string; notice?: string } | { render: string };

export interface ConsoleRouter {
  page(kind: ConsoleKind, path: string, handler: (ctx: ConsoleContext) => Promise<string>): void;
  /** `back`: where a refused action returns, its error shown there. */
  action(kind: ConsoleKind, path: string, back: (ctx: ConsoleContext) => string, handler: (ctx: ConsoleContext) => Promise<ActionOutcome>): void;
  /**
   * A server-sent-events route: `open` answers the events to send (given the browser's Last-Event-ID and a signal
   * that ends when the browser goes away); the response ends with them. A refusal at the open is its HTTP status.
   */
  eventStream(
    kind: ConsoleKind,
    path: string,
    open: (ctx: ConsoleContext, lastEventId: string | undefined, signal: AbortSignal) => Promise<AsyncIterable<ServerSentEvent>>,
  ): void;
  options: DashboardOptions;
}

/** A path segment from an id. */
export function seg(id: string): string {
  return encodeURIComponent(id);
}
