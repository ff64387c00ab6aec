// How every `svc` command reaches the service: the API key (SVC_API_KEY or --api-key), the service's URL
// (SVC_URL or --url, REST and Connect share it) and, when given, a gRPC address (SVC_GRPC_URL or --grpc-url)
// to call over gRPC instead of Connect. Failures become one line a person can act on.
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";

const DEFAULT_URL = "http://127.0.0.1:8080";

/** A failure the command explains in one line (no stack trace), exiting with status 1. */
export class CliError extends Error {}

/** The options every command takes, for node:util parseArgs. */
export const CONNECTION_OPTIONS = {
  "api-key": { type: "string" },
  url: { type: "string" },
  "grpc-url": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export const CONNECTION_HELP = `Connection (every command):
  --api-key KEY     a secret API key (default: $SVC_API_KEY)
  --url URL         the service (default: $SVC_URL, else ${DEFAULT_URL}); Connect is served there too
  --grpc-url URL    call over gRPC (HTTP/2) at this address instead (default: $SVC_GRPC_URL, if set)
  -h, --help        this help`;

export interface Connection {
  apiKey: string;
  /** Where calls go, as printed in errors. */
  address: string;
  client<S extends DescService>(service: S): Client<S>;
}

/** The http(s) URL an option gives, or a one-line refusal naming the option and an `example`. */
export function parsedUrl(value: string, option: string, example = DEFAULT_URL): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`${option} ${JSON.stringify(value)} is not a URL; give one such as ${example}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError(`${option} ${value} must be an http:// or https:// URL`);
  return url;
}

export function connectionOf(
  values: { "api-key"?: string | undefined; url?: string | undefined; "grpc-url"?: string | undefined },
  env: NodeJS.ProcessEnv,
): Connection {
  const apiKey = values["api-key"] ?? env.SVC_API_KEY;
  if (!apiKey) throw new CliError("no API key: set SVC_API_KEY or pass --api-key (a svc_test_... key of your project)");
  const url = parsedUrl(values.url ?? env.SVC_URL ?? DEFAULT_URL, "--url");
  const grpcUrl = values["grpc-url"] ?? env.SVC_GRPC_URL;
  const auth: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${apiKey}`);
    return next(request);
  };
  let transport: Transport;
  let address: string;
  if (grpcUrl) {
    const grpc = parsedUrl(grpcUrl, "--grpc-url");
    transport = createGrpcTransport({ baseUrl: grpc.origin, interceptors: [auth] });
    address = grpc.origin;
  } else {
    const base = url.href.replace(/\/$/, "");
    transport = createConnectTransport({ baseUrl: base, httpVersion: "1.1", interceptors: [auth] });
    address = base;
  }
  return { apiKey, address, client: (service) => createClient(service, transport) };
}

/** Errors of the network rather than of the service: it cannot be reached at all. */
const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNRESET|socket hang up/;

/** Whether a failure may pass by itself (the service restarting, the network): a client should try again. */
export function isTransient(error: unknown): boolean {
  const e = ConnectError.from(error);
  return e.code === Code.Unavailable || e.code === Code.Unknown || e.code === Code.Internal || e.code === Code.Aborted || e.code === Code.Canceled;
}

/** One line for a failed call: the service unreachable, or the service's code and message. */
export function describeFailure(error: unknown, connection: Pick<Connection, "address">): string {
  if (error instanceof CliError) return error.message;
  const e = ConnectError.from(error);
  const causeText = `${String((e.cause as { code?: string } | undefined)?.code ?? "")} ${e.rawMessage}`;
  if (e.code === Code.Unavailable || UNREACHABLE.test(causeText)) {
    return `cannot reach Svc at ${connection.address} (${e.rawMessage}); is it running? (set SVC_URL or --url)`;
  }
  const reason = e.findDetails(ErrorInfoSchema)[0]?.reason;
  return reason ? `${reason}: ${e.rawMessage}` : e.rawMessage;
}
