// /dashboard on PORT (API role): sign-in with a secret API key (the project console of its project and
// environment) or with the admin token (the operator console). Server-rendered HTML; every read and change is a
// call through the same pipeline as the API's (key, rate limit, access rules, Idempotency-Key), of the same
// ServiceImpl method, with the same principal, rules, errors and events. Security (docs/dashboard.md): server-side sessions with a 12 h idle expiry, an HttpOnly
// SameSite=Strict cookie (Secure over TLS), a CSRF token on every change, a strict CSP, sign-in rate limited.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { setTimeout } from "node:timers/promises";
import { create, type DescMethod } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { adminTokenMatches, tokenDigest } from "../access/admin-token.ts";
import type { Principal } from "../access/principal.ts";
import { takesIdempotencyKey } from "../api/idempotent-methods.ts";
import { apiKeyLivemode, hashApiKey } from "../domain/api-keys.ts";
import { describeError } from "../domain/errors.ts";
import { type Call, CallFailure, type Caller } from "../pipeline/call-pipeline.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";
import type { DashboardSessionDocument } from "../store/dashboard-session-repository.ts";
import { DASHBOARD_CSS, DASHBOARD_ICON, DASHBOARD_JS } from "./assets.ts";
import { html } from "./html.ts";
import { csrfField, FORM_KEY_FIELD, page, type Flash, type Shell } from "./layout.ts";
import { registerOperatorConsole } from "./operator-console.ts";
import { registerDeliveryConsole } from "./delivery-console.ts";
import { registerMoneyConsole } from "./money-console.ts";
import { registerProjectConsole } from "./project-console.ts";
import { registerRequestLogs } from "./request-logs-console.ts";
import { registerSmsOutbox } from "./sms-outbox.ts";
import type { ConsoleContext, ConsoleKind, ConsoleRouter, DashboardOptions, ServerSentEvent } from "./console-router.ts";
import { registerLiveEvents } from "./live-events-console.ts";
import { sendServerSentEvents } from "./server-sent-events.ts";

/** A session ends after this long without a page or action. */
export const IDLE_LIFETIME_MS = 12 * 60 * 60 * 1000;
/** The idle deadline is pushed back at most once a minute, so most pages write nothing. */
const TOUCH_AFTER_MS = 60_000;
const SESSION_COOKIE = "svc_dashboard";
const SIGN_IN_COOKIE = "svc_dashboard_signin";
const FORM_LIMIT_BYTES = 64 * 1024;
/** How long a post waits for the first post of the same form to finish, and how often it looks. */
const IN_PROGRESS_WAIT_MS = 15_000;
const IN_PROGRESS_POLL_MS = 50;

/**
 * `default-src 'self'` and nothing inline: no inline script or style can run, even if escaping failed
 * somewhere; no page may frame the dashboard; forms post only to it.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function newToken(): string {
  return randomBytes(32).toString("base64url");
}

function sessionIdOf(token: string): string {
  return tokenDigest(token).toString("hex");
}

function sameToken(given: string | null | undefined, expected: string): boolean {
  if (!given) return false;
  return timingSafeEqual(tokenDigest(given), tokenDigest(expected));
}

function cookiesOf(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) cookies.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return cookies;
}

function overTls(request: FastifyRequest, mode: DashboardOptions["secureCookie"]): boolean {
  if (mode === "always") return true;
  const proto = request.headers["x-forwarded-proto"];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(",")[0]?.trim().toLowerCase();
  return first === "https";
}

function cookie(name: string, value: string, path: string, secure: boolean, maxAgeSeconds?: number): string {
  return [
    `${name}=${value}`,
    `Path=${path}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
    ...(maxAgeSeconds !== undefined ? [`Max-Age=${maxAgeSeconds}`] : []),
  ].join("; ");
}

function sendPage(reply: FastifyReply, status: number, markup: string): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(markup);
}

function errorPage(title: string, text: string, shell: Partial<Shell> = {}): string {
  return page({ ...shell, title }, html`<h1>${title}</h1><p>${text}</p><p><a href="/dashboard">Back to the dashboard</a></p>`);
}

/**
 * Pages a signed-out visitor comes back to after signing in: the simulated KYC page a sandbox session's `url`
 * opens. Only these exact shapes, so `next` can never send anyone off the dashboard.
 */
const RETURNABLE_PATH = /^\/dashboard\/kyc\/[A-Za-z0-9_-]{1,100}$/;

function returnPath(value: unknown): string | null {
  return typeof value === "string" && RETURNABLE_PATH.test(value) ? value : null;
}

/** Where a session of this kind starts. */
function homeOf(kind: ConsoleKind): string {
  return kind === "operator" ? "/dashboard/operator" : "/dashboard";
}

export async function dashboardRoutes(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const { sessions, clock } = options;

  app.addHook("onRequest", async (_request, reply) => {
    reply.headers({
      "content-security-policy": CONTENT_SECURITY_POLICY,
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
      "cross-origin-opener-policy": "same-origin",
    });
  });
  // Forms only: URL-encoded, 64 KiB at most; anything else is refused before a handler runs.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: FORM_LIMIT_BYTES }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string));
  });
  app.setErrorHandler(async (error: { statusCode?: number }, _request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    const text =
      status === 415 ? "Forms are sent as application/x-www-form-urlencoded." : status === 413 ? "The form is too large." : "Something went wrong.";
    return sendPage(reply, status, errorPage(status === 500 ? "Error" : "Request refused", text));
  });
  app.setNotFoundHandler(async (_request, reply) => sendPage(reply, 404, errorPage("Page not found", "No dashboard page has this address.")));

  app.get("/assets/dashboard.css", async (_request, reply) =>
    reply.header("cache-control", "no-cache").type("text/css; charset=utf-8").send(DASHBOARD_CSS),
  );
  app.get("/assets/favicon.svg", async (_request, reply) =>
    reply.header("cache-control", "max-age=86400").type("image/svg+xml").send(DASHBOARD_ICON),
  );
  app.get("/assets/dashboard.js", async (_request, reply) =>
    reply.header("cache-control", "no-cache").type("text/javascript; charset=utf-8").send(DASHBOARD_JS),
  );

  /** The live session named by the request's cookie, and its id. */
  async function currentSession(request: FastifyRequest): Promise<{ id: string; session: DashboardSessionDocument } | null> {
    const token = cookiesOf(request).get(SESSION_COOKIE);
    if (!token || token.length > 100) return null;
    const id = sessionIdOf(token);
    const session = await sessions.findLive(id, clock());
    return session ? { id, session } : null;
  }

  function signInPage(request: FastifyRequest, reply: FastifyReply, status: number, flash: Flash | null, next: string | null = null): FastifyReply {
    const token = newToken();
    reply.header("set-cookie", cookie(SIGN_IN_COOKIE, token, "/dashboard/sign-in", overTls(request, options.secureCookie)));
    const body = html`<div class="signin card">
      <h1>Sign in to the Svc dashboard</h1>
      <form method="post" action="/dashboard/sign-in" class="stack">
        ${csrfField(token)}
        ${next ? html`<input type="hidden" name="next" value="${next}">` : ""}
        <label for="credential">Secret API key or admin token</label>
        <input type="password" id="credential" name="credential" autocomplete="off" required spellcheck="false">
        <p class="muted">A secret API key (<code>svc_test_…</code> or <code>svc_live_…</code>) opens the console of its project and
        environment; the admin token opens the operator console. Neither is kept by your browser.</p>
        <button type="submit">Sign in</button>
      </form>
    </div>`;
    return sendPage(reply, status, page({ title: "Sign in", flash }, body));
  }

  app.get("/sign-in", async (request, reply) => {
    const current = await currentSession(request);
    const next = returnPath((request.query as Record<string, unknown>).next);
    if (current) return reply.redirect(current.session.kind === "project" && next ? next : homeOf(current.session.kind), 303);
    return signInPage(request, reply, 200, null, next);
  });

  app.post("/sign-in", async (request, reply) => {
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const next = returnPath(form.get("next"));
    // Login CSRF: the form's token must match the cookie the sign-in page set (SameSite=Strict).
    if (!sameToken(form.get("_csrf"), cookiesOf(request).get(SIGN_IN_COOKIE) ?? newToken())) {
      return signInPage(request, reply, 403, { kind: "error", text: "The sign-in form expired. Please try again." }, next);
    }
    const limit = await options.rateLimiter.consume(`dashboard-sign-in:${request.ip}`, options.signInLimit);
    if (limit.exceeded) {
      reply.header("retry-after", String(limit.resetSeconds));
      return signInPage(request, reply, 429, { kind: "error", text: `Too many sign-in attempts. Try again in ${limit.resetSeconds} s.` }, next);
    }
    const credential = (form.get("credential") ?? "").trim();
    const now = clock();
    const base = { created_at: now, last_seen_at: now, expires_at: new Date(now.getTime() + IDLE_LIFETIME_MS), csrf_token: newToken(), flash: null };
    let session: Omit<DashboardSessionDocument, "_id">;
    const livemode = apiKeyLivemode(credential);
    if (livemode !== null) {
      try {
        await options.authenticator.authenticate(`Bearer ${credential}`);
      } catch (error) {
        const described = describeError(error);
        return signInPage(request, reply, described.definition.status, { kind: "error", text: `${described.message} (${described.code})` }, next);
      }
      session = { ...base, kind: "project", key_hash: hashApiKey(credential), livemode, admin_token_hash: null };
    } else if (credential !== "" && adminTokenMatches(credential, options.adminToken)) {
      session = { ...base, kind: "operator", key_hash: null, livemode: false, admin_token_hash: tokenDigest(options.adminToken).toString("hex") };
    } else {
      return signInPage(request, reply, 401, { kind: "error", text: "This is neither a valid secret API key nor the admin token." }, next);
    }
    // A fresh token at every sign-in: a session id known before it (fixation) is worth nothing.
    const token = newToken();
    await sessions.insert({ _id: sessionIdOf(token), ...session });
    const secure = overTls(request, options.secureCookie);
    reply.header("set-cookie", [cookie(SESSION_COOKIE, token, "/dashboard", secure), cookie(SIGN_IN_COOKIE, "", "/dashboard/sign-in", secure, 0)]);
    return reply.redirect(session.kind === "project" && next ? next : homeOf(session.kind), 303);
  });

  app.post("/sign-out", async (request, reply) => {
    const current = await currentSession(request);
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    if (current) {
      if (!sameToken(form.get("_csrf"), current.session.csrf_token))
        return sendPage(reply, 403, errorPage("Request refused", "This form has no valid CSRF token."));
      await sessions.delete(current.id);
    }
    reply.header("set-cookie", cookie(SESSION_COOKIE, "", "/dashboard", overTls(request, options.secureCookie), 0));
    return reply.redirect("/dashboard/sign-in", 303);
  });

  type Prepared = { ctx: ConsoleContext; id: string } | { done: FastifyReply };

  /** The session of a console request, checked again (key, organization, admin token), as a context. */
  async function prepare(kind: ConsoleKind, request: FastifyRequest, reply: FastifyReply): Promise<Prepared> {
    const current = await currentSession(request);
    if (!current) {
      if (request.method === "GET") {
        const next = returnPath(request.url.split("?")[0]);
        return { done: reply.redirect(next ? `/dashboard/sign-in?next=${encodeURIComponent(next)}` : "/dashboard/sign-in", 303) };
      }
      return { done: sendPage(reply, 401, errorPage("Signed out", "Your session has ended. Sign in again.")) };
    }
    const { id, session } = current;
    if (session.kind !== kind) return { done: reply.redirect(homeOf(session.kind), 303) };
    let principal: Principal | null = null;
    try {
      if (session.kind === "project") principal = await options.authenticator.authenticateHash(session.key_hash!, session.livemode);
      else if (session.admin_token_hash !== tokenDigest(options.adminToken).toString("hex")) throw new Error("admin token changed");
    } catch (error) {
      // The key was revoked, its organization suspended, or the admin token changed: the session ends.
      await sessions.delete(id);
      reply.header("set-cookie", cookie(SESSION_COOKIE, "", "/dashboard", overTls(request, options.secureCookie), 0));
      const described = describeError(error);
      const text =
        described.code === "internal_error" ? "Your session has ended." : `Your session has ended: ${described.message} (${described.code})`;
      return { done: signInPage(request, reply, 401, { kind: "error", text }) };
    }
    const now = clock();
    if (now.getTime() - session.last_seen_at.getTime() >= TOUCH_AFTER_MS) await sessions.touch(id, now, new Date(now.getTime() + IDLE_LIFETIME_MS));
    const flash = session.flash;
    if (flash && request.method === "GET") await sessions.setFlash(id, null);
    const scope = principal ? { projectId: principal.projectId, livemode: principal.livemode } : null;
    // The header names the project; a project deleted under a live session still shows its id.
    const projectName = scope ? ((await options.queries.findProject(scope.projectId))?.name ?? scope.projectId) : "";
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const caller: Caller =
      session.kind === "project" ? { kind: "session-key", keyHash: session.key_hash!, livemode: session.livemode } : { kind: "admin" };
    const keys = formKeys(request.method === "POST" ? form.get(FORM_KEY_FIELD) : null);
    // One request id per call in the request log: the page's own for its first call, `<id>_2`, ... after it.
    let calls = 0;
    const call = (method: DescMethod, init: object, as: Caller) =>
      callThroughPipeline(request, method, init, as, keys, ++calls === 1 ? request.id : `${request.id}_${calls}`);
    const ctx: ConsoleContext = {
      request,
      reply,
      params: request.params as Record<string, string>,
      query: request.query as Record<string, string>,
      form,
      session,
      csrf: session.csrf_token,
      flash: request.method === "GET" ? flash : null,
      principal,
      scope,
      call: (method, init) => call(method, init, caller) as never,
      callAs: (as, method, init) => call(method, init, session.kind === "operator" ? { kind: "admin", actingAs: as } : caller) as never,
      stream: (method, init, signal) => streamThroughPipeline(request, method, init, caller, signal) as never,
      shell: (title, section) => ({
        title,
        console: scope
          ? { kind: "project", projectId: scope.projectId, projectName, livemode: scope.livemode, smsOutbox: options.smsOutbox !== undefined }
          : { kind: "operator" },
        csrf: session.csrf_token,
        flash: request.method === "GET" ? flash : null,
        ...(section ? { section } : {}),
      }),
    };
    return { ctx, id };
  }

  /**
   * The Idempotency-Keys of one posted form, in the order its action makes changes: the form's own key for the
   * first, then derived ones, so a second post of the form maps each change to the same key. Pages take none.
   */
  function formKeys(formKey: string | null): () => string | undefined {
    let used = 0;
    return () => {
      if (!formKey) return undefined;
      used++;
      return used === 1 ? formKey : `${formKey}.${used}`;
    };
  }

  /** The pipeline's call of a console request: the dashboard door, the session's caller, a handler context of its own. */
  function dashboardCall(
    request: FastifyRequest,
    method: DescMethod,
    caller: Caller,
    fields: Pick<Call, "requestId" | "idempotencyKey" | "takesIdempotencyKey" | "retriedWhenInProgress">,
    signal?: AbortSignal,
  ) {
    const context = createHandlerContext({
      service: method.parent,
      method,
      protocolName: "dashboard",
      requestMethod: request.method,
      url: request.url,
      requestHeader: [],
      contextValues: createContextValues(),
      ...(signal ? { requestSignal: signal } : {}),
    });
    const call = options.pipeline.newCall({
      ...fields,
      door: "dashboard",
      method,
      caller,
      version: undefined,
      clientAddress: request.ip,
      values: context.values,
      context: () => context,
    });
    return { call, context };
  }

  /**
   * A console's call of a service method: the same pipeline as the API's (the session's key admitted and rate
   * limited, the method's access rule, the form's Idempotency-Key claimed and its answer stored or replayed),
   * under the page's request id. A post of the same form while its first post still runs waits for that answer
   * and shows it (a browser's double click cannot retry on 409 the way an API client does).
   */
  async function callThroughPipeline(
    request: FastifyRequest,
    method: DescMethod,
    init: object,
    caller: Caller,
    keys: () => string | undefined,
    callId: string,
  ) {
    const takesKey = takesIdempotencyKey(method);
    const idempotencyKey = takesKey ? keys() : undefined;
    const started = performance.now();
    const deadline = started + IN_PROGRESS_WAIT_MS;
    for (;;) {
      const { call, context } = dashboardCall(request, method, caller, {
        requestId: callId,
        idempotencyKey,
        takesIdempotencyKey: takesKey,
        retriedWhenInProgress: performance.now() < deadline,
      });
      try {
        const answer = await options.pipeline.run(call, {
          decode: () => ({ message: create(method.input, init as never) }),
          execute: (message) => options.registry.invoke(method, message, context),
          answerOf: (message) => message,
          replayed: (message) => message,
        });
        options.recordCall({ requestId: request.id, method, code: null, durationMs: performance.now() - started });
        return answer;
      } catch (error) {
        if (!(error instanceof CallFailure)) throw error;
        if (error.described.code === "idempotency_in_progress" && call.retriedWhenInProgress) {
          await setTimeout(IN_PROGRESS_POLL_MS);
          continue;
        }
        options.recordCall({ requestId: request.id, method, code: connectErrorOf(error.error).code, durationMs: performance.now() - started });
        throw error.error;
      }
    }
  }

  /** A console's stream of a server-streaming method: opened through the same pipeline (key, rate limit, stream slots). */
  async function streamThroughPipeline(request: FastifyRequest, method: DescMethod, init: object, caller: Caller, signal: AbortSignal) {
    const started = performance.now();
    const { call, context } = dashboardCall(
      request,
      method,
      caller,
      { requestId: request.id, idempotencyKey: undefined, takesIdempotencyKey: false },
      signal,
    );
    try {
      const messages = await options.pipeline.openStream(call, {
        decode: () => ({ message: create(method.input, init as never) }),
        open: async (message) => options.registry.openStream(method, message, context),
        // The console ends its server-sent events on a failure; it takes the pipeline's CallFailure as it is.
        asTransportError: (failure) => failure,
      });
      options.recordCall({ requestId: request.id, method, code: null, durationMs: performance.now() - started });
      return messages;
    } catch (error) {
      if (!(error instanceof CallFailure)) throw error;
      options.recordCall({ requestId: request.id, method, code: connectErrorOf(error.error).code, durationMs: performance.now() - started });
      throw error.error;
    }
  }

  const router: ConsoleRouter = {
    options,
    page(kind, path, handler) {
      app.get(path, async (request, reply) => {
        const prepared = await prepare(kind, request, reply);
        if ("done" in prepared) return prepared.done;
        try {
          return sendPage(reply, 200, await handler(prepared.ctx));
        } catch (error) {
          const described = describeError(error);
          if (described.code === "internal_error") request.log.error({ err: error }, "dashboard page failed");
          return sendPage(
            reply,
            described.definition.status,
            errorPage("Not available", `${described.message} (${described.code})`, prepared.ctx.shell("Error")),
          );
        }
      });
    },
    action(kind, path, back, handler) {
      app.post(path, async (request, reply) => {
        const prepared = await prepare(kind, request, reply);
        if ("done" in prepared) return prepared.done;
        const { ctx, id } = prepared;
        if (!sameToken(ctx.form.get("_csrf"), ctx.csrf)) {
          return sendPage(
            reply,
            403,
            errorPage("Request refused", "This form has no valid CSRF token. Reload the page and try again.", ctx.shell("Refused")),
          );
        }
        try {
          const outcome = await handler(ctx);
          if ("render" in outcome) return sendPage(reply, 200, outcome.render);
          if (outcome.notice) await sessions.setFlash(id, { kind: "success", text: outcome.notice });
          return reply.redirect(outcome.redirect, 303);
        } catch (error) {
          const described = describeError(error);
          if (described.code === "internal_error") request.log.error({ err: error }, "dashboard action failed");
          const param = described.param ? ` [${described.param}]` : "";
          await sessions.setFlash(id, { kind: "error", text: `${described.message} (${described.code})${param}` });
          return reply.redirect(back(ctx), 303);
        }
      });
    },
    eventStream(kind, path, open) {
      app.get(path, async (request, reply) => {
        const prepared = await prepare(kind, request, reply);
        if ("done" in prepared) return prepared.done;
        const gone = new AbortController();
        request.raw.once("close", () => gone.abort());
        reply.raw.once("close", () => gone.abort());
        const lastEventId = request.headers["last-event-id"];
        let events: AsyncIterable<ServerSentEvent>;
        try {
          events = await open(prepared.ctx, typeof lastEventId === "string" ? lastEventId : undefined, gone.signal);
        } catch (error) {
          // An EventSource gives up on an error status (it retries only a dropped connection).
          const described = describeError(error);
          if (described.code === "internal_error") request.log.error({ err: error }, "dashboard stream failed");
          return reply.code(described.definition.status).type("text/plain; charset=utf-8").send(`${described.message} (${described.code})`);
        }
        await sendServerSentEvents(reply, events, gone.signal);
        return reply;
      });
    },
  };
  registerProjectConsole(router);
  registerLiveEvents(router);
  registerMoneyConsole(router);
  registerDeliveryConsole(router);
  registerSmsOutbox(router);
  registerRequestLogs(router);
  registerOperatorConsole(router);
}
