// The request log in the project console: the calls of the session's project and environment, newest first,
// filtered by status class, route and source, a request id looked up directly, each row opening its log. Plain
// GET forms and links: it works without JavaScript. Its reads are RequestLogsService calls like the API's.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { RequestLogsService, type RequestLog } from "../../gen/svc/v1/request_logs_pb.ts";
import { describeError } from "../domain/errors.ts";
import { REQUEST_LOG_SOURCES } from "../domain/request-logs.ts";
import { requestLogJson } from "../representations/request-logs.ts";
import { seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { html, type Html } from "./html.ts";
import { filteredResults, jsonBlock, nextPageLink, page, table, time } from "./layout.ts";
import { PAGE_SIZE } from "./project-console-common.ts";

const STATUS_CLASSES = ["2xx", "4xx", "5xx"] as const;

/** A status as a tag coloured by its class: success, the caller's mistake, the service's failure. */
function statusBadge(status: number): Html {
  const tone = status >= 500 ? "failed" : status >= 400 ? "pending" : "succeeded";
  return html`<span class="tag tag-${tone}">${String(status)}</span>`;
}

function logLink(log: RequestLog): Html {
  return html`<a href="/dashboard/logs/${seg(log.id)}"><code>${log.id}</code></a>`;
}

function detail(log: RequestLog): Html {
  return html`<dl class="facts request-log">
      <dt>Request</dt><dd><code>${log.method} ${log.path}</code></dd>
      <dt>Route</dt><dd>${log.route ? html`<code>${log.route}</code>` : html`<span class="muted">no route matched</span>`}</dd>
      <dt>Status</dt><dd>${statusBadge(log.status)}${log.errorCode ? html` <code>${log.errorCode}</code>` : ""}</dd>
      <dt>Source</dt><dd>${log.source}</dd>
      <dt>Duration</dt><dd>${String(log.durationMs)} ms</dd>
      <dt>Idempotency-Key</dt><dd>${log.idempotencyKey ? html`<code>${log.idempotencyKey}</code>${log.idempotentReplayed ? " (replayed)" : ""}` : "—"}</dd>
      <dt>API key</dt><dd>${log.apiKeyId ? html`<code>${log.apiKeyId}</code>` : "—"}</dd>
      <dt>Time</dt><dd>${time(log.createdAt ? timestampDate(log.createdAt) : null)}</dd>
    </dl>
    ${jsonBlock("Request log JSON", requestLogJson(log))}`;
}

/** The log of `id`, or null when the project and environment have none of that id. */
async function findLog(ctx: ConsoleContext, id: string): Promise<RequestLog | null> {
  try {
    return (await ctx.call(RequestLogsService.method.getRequestLog, { id })).requestLog ?? null;
  } catch (error) {
    if (describeError(error).code === "request_log_not_found") return null;
    throw error;
  }
}

function filterForm(q: Record<string, string | undefined>): Html {
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}"${value === (current ?? "") ? html` selected` : ""}>${label}</option>`;
  return html`<form method="get" action="/dashboard/logs" class="row" aria-label="Find a request by its id">
      <div class="field"><label for="f-request-id">Request id</label><input type="text" id="f-request-id" name="request_id" value="${q.request_id ?? ""}" placeholder="req_…" spellcheck="false"></div>
      <button type="submit">Find</button>
    </form>
    <form method="get" action="/dashboard/logs" class="row" aria-label="Filter requests" data-filter>
      <div class="field"><label for="f-status">Status</label><select id="f-status" name="status">${option("", "Any status", q.status)}${STATUS_CLASSES.map((s) => option(s, s, q.status))}</select></div>
      <div class="field"><label for="f-route">Route</label><input type="text" id="f-route" name="route" value="${q.route ?? ""}" placeholder="/v1/users/{id}" spellcheck="false"></div>
      <div class="field"><label for="f-source">Source</label><select id="f-source" name="source">${option("", "Every source", q.source)}${REQUEST_LOG_SOURCES.map((s) => option(s, s, q.source))}</select></div>
      <button type="submit">Filter</button>
    </form>`;
}

export function registerRequestLogs(router: ConsoleRouter): void {
  router.page("project", "/logs", async (ctx) => {
    const q = ctx.query;
    const requestId = q.request_id?.trim();
    if (requestId) {
      const found = await findLog(ctx, requestId);
      return page(
        ctx.shell("Logs", "logs"),
        html`<h1>Logs</h1>${filterForm(q)}
        ${found ? html`<h2>Request ${logLink(found)}</h2>${detail(found)}` : html`<p class="empty">No request of this project and environment has the id <code>${requestId}</code>.</p>`}`,
      );
    }
    const filters = { status: q.status || undefined, route: q.route?.trim() || undefined, source: q.source || undefined };
    const answer = await ctx.call(RequestLogsService.method.listRequestLogs, {
      limit: PAGE_SIZE,
      ...(filters.status ? { status: filters.status } : {}),
      ...(filters.route ? { route: filters.route } : {}),
      ...(filters.source ? { source: filters.source } : {}),
      ...(q.starting_after ? { startingAfter: q.starting_after } : {}),
    });
    return page(
      ctx.shell("Logs", "logs"),
      html`<h1>Logs</h1>
      <p class="muted">Every call of this project and environment through the API, Connect, gRPC and this dashboard, kept 30 days.</p>
      ${filterForm(q)}
      ${filteredResults(html`${table(
        "Requests, newest first",
        ["Request", "Status", "Method and path", "Source", "Duration", "Time"],
        answer.data.map(
          (
            log,
          ) => html`<tr class="request-log"><td>${logLink(log)}</td><td>${statusBadge(log.status)}${log.errorCode ? html` ${log.errorCode}` : ""}</td>
          <td><code>${log.method} ${log.path}</code></td><td>${log.source}</td><td>${String(log.durationMs)} ms</td><td>${time(log.createdAt ? timestampDate(log.createdAt) : null)}</td></tr>`,
        ),
        "No request matches.",
      )}
      ${nextPageLink("/dashboard/logs", filters, answer.data.at(-1)?.id, answer.hasMore)}`)}`,
    );
  });

  // An id of no log of this project and environment is the service's 404 (request_log_not_found), as over the API.
  router.page("project", "/logs/:id", async (ctx) => {
    const id = ctx.params.id!;
    const { requestLog } = await ctx.call(RequestLogsService.method.getRequestLog, { id });
    return page(
      ctx.shell(`Request ${id}`, "logs"),
      html`<h1>Request <code>${id}</code></h1>${detail(requestLog!)}<p><a href="/dashboard/logs">All requests</a></p>`,
    );
  });
}
