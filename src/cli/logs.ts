// `svc logs tail [--status 4xx]`: the request log of the key's project and environment as calls are answered,
// one line each, through RequestLogsService.TailRequestLogs. When the stream ends (the service restarting, the
// network) it reconnects; calls answered meanwhile are in `GET /v1/request-logs`, not in the tail.
import { parseArgs } from "node:util";
import { RequestLogsService, type TailRequestLogsResponse } from "../../gen/svc/v1/request_logs_pb.ts";
import { requestLogJson, type RequestLogJson } from "../representations/request-logs.ts";
import { type CliCommand, say } from "./command.ts";
import { CliError, CONNECTION_HELP, CONNECTION_OPTIONS, connectionOf } from "./connection.ts";
import { followStream } from "./follow-stream.ts";

/** One printed line: when, status and code, the call, its door and time, and its request id. */
function logLine(log: RequestLogJson): string {
  const outcome = log.error_code ? `${log.status} ${log.error_code}` : String(log.status);
  return `${log.created_at}  [${outcome}] ${log.method} ${log.path}  (${log.source}, ${log.duration_ms} ms)  ${log.id}`;
}

export const logsCommand: CliCommand = {
  name: "logs",
  summary: "tail the project's request log",
  help: `Usage: svc logs tail [--status STATUS] [--route ROUTE] [--source SOURCE] [--method METHOD] [--error-code CODE]

Prints every call of the key's project and environment as it is answered (REST, Connect, gRPC, the dashboard),
one line each: time, [status and error code], method and path, source and duration, request id. Ends with ^C.

  --status STATUS      one status (404) or a class (2xx, 4xx, 5xx)
  --route ROUTE        a route template, such as /v1/users/{id}
  --source SOURCE      rest, connect, grpc or dashboard
  --method METHOD      GET, POST, PATCH, DELETE or RPC
  --error-code CODE    an error code, such as user_not_found

${CONNECTION_HELP}`,
  async run(args, env) {
    const { values, positionals } = parseArgs({
      args,
      options: {
        ...CONNECTION_OPTIONS,
        status: { type: "string" },
        route: { type: "string" },
        source: { type: "string" },
        method: { type: "string" },
        "error-code": { type: "string" },
      },
      allowPositionals: true,
    });
    if (values.help) {
      say(this.help);
      return 0;
    }
    if (positionals[0] !== "tail" || positionals.length > 1) throw new CliError("give tail (svc logs --help)");
    const connection = connectionOf(values, env);
    const logs = connection.client(RequestLogsService);
    const request = {
      ...(values.status !== undefined ? { status: values.status } : {}),
      ...(values.route !== undefined ? { route: values.route } : {}),
      ...(values.source !== undefined ? { source: values.source } : {}),
      ...(values.method !== undefined ? { method: values.method } : {}),
      ...(values["error-code"] !== undefined ? { errorCode: values["error-code"] } : {}),
    };
    // The tail's own call is in the log too: it is not printed.
    let ownId: string | null = null;
    await followStream(connection, {
      open: (signal) =>
        logs.tailRequestLogs(request, {
          signal,
          onHeader: (header) => (ownId = header.get("x-request-id")),
        }) as AsyncIterable<TailRequestLogsResponse>,
      ready: () => say(`Ready! Tailing the request log of ${connection.address} (^C to quit)`),
      message: (message) => {
        const log = requestLogJson(message.requestLog!);
        if (log.id !== ownId) say(logLine(log));
      },
    });
    return 0;
  },
};
