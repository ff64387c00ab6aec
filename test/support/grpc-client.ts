// A stock @grpc/grpc-js client built from the .proto files, as an integrator outside this codebase would
// build one: no generated TypeScript, only the contract. Errors are read back from `grpc-status-details-bin`.
import { create, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { ErrorInfoSchema, type ErrorInfo } from "../../gen/google/rpc/error_details_pb.ts";
import { StatusSchema } from "../../gen/google/rpc/status_pb.ts";

const PROTO_FILES = [
  "svc/v1/users.proto",
  "svc/v1/events.proto",
  "svc/v1/identity.proto",
  "svc/v1/transactions.proto",
  "svc/v1/webhook_endpoints.proto",
];
const definition = protoLoader.loadSync(PROTO_FILES, {
  includeDirs: [fileURLToPath(new URL("../../proto", import.meta.url))],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
});
const svcV1 = (grpc.loadPackageDefinition(definition) as any).svc.v1;

export interface GrpcReply<T = any> {
  message: T;
  /** Response headers (initial metadata). */
  header: grpc.Metadata;
}

export interface GrpcFailure {
  code: grpc.status;
  details: string;
  metadata: grpc.Metadata;
  /** The `google.rpc.ErrorInfo` carried in `grpc-status-details-bin`; an empty one when there is none. */
  info: ErrorInfo;
}

export type GrpcOutcome<T = any> = { ok: true; reply: GrpcReply<T> } | { ok: false; failure: GrpcFailure };

/** The ErrorInfo detail of an error; absent details give an empty one, so assertions on `reason` fail plainly. */
function errorInfoOf(metadata: grpc.Metadata): ErrorInfo {
  const [raw] = metadata.get("grpc-status-details-bin");
  if (!(raw instanceof Buffer)) return create(ErrorInfoSchema);
  const status = fromBinary(StatusSchema, raw);
  return status.details.map((any) => anyUnpack(any, ErrorInfoSchema)).find((d) => d !== undefined) ?? create(ErrorInfoSchema);
}

/** The public services the stock client knows, by their proto names. */
export type GrpcServiceName =
  | "UsersService"
  | "EventsService"
  | "PhoneVerificationService"
  | "KycSessionsService"
  | "SandboxService"
  | "TransactionsService"
  | "SandboxTransactionsService"
  | "WebhookEndpointsService";

export class GrpcTestClient {
  private readonly clients: Record<string, grpc.Client>;

  constructor(address: string) {
    this.clients = {
      UsersService: new svcV1.UsersService(address, grpc.credentials.createInsecure()),
      EventsService: new svcV1.EventsService(address, grpc.credentials.createInsecure()),
      PhoneVerificationService: new svcV1.PhoneVerificationService(address, grpc.credentials.createInsecure()),
      KycSessionsService: new svcV1.KycSessionsService(address, grpc.credentials.createInsecure()),
      SandboxService: new svcV1.SandboxService(address, grpc.credentials.createInsecure()),
      TransactionsService: new svcV1.TransactionsService(address, grpc.credentials.createInsecure()),
      SandboxTransactionsService: new svcV1.SandboxTransactionsService(address, grpc.credentials.createInsecure()),
      WebhookEndpointsService: new svcV1.WebhookEndpointsService(address, grpc.credentials.createInsecure()),
    };
  }

  /**
   * One unary call; `metadata` holds plain headers (`authorization`, `idempotency-key`, `svc-version`).
   * Never rejects: the outcome says whether the call succeeded.
   */
  call<T = any>(service: GrpcServiceName, method: string, request: object, metadata: Record<string, string> = {}): Promise<GrpcOutcome<T>> {
    const md = metadataOf(metadata);
    const client = this.clients[service] as any;
    return new Promise((resolve) => {
      let header = new grpc.Metadata();
      const call = client[method](request, md, (error: grpc.ServiceError | null, message: T) => {
        if (error) {
          resolve({ ok: false, failure: { code: error.code, details: error.details, metadata: error.metadata, info: errorInfoOf(error.metadata) } });
        } else {
          resolve({ ok: true, reply: { message, header } });
        }
      });
      call.on("metadata", (m: grpc.Metadata) => {
        header = m;
      });
    });
  }

  /** One server-streaming call, its messages read as the stream's events; `metadata` as for `call`. */
  stream<T = any>(service: GrpcServiceName, method: string, request: object, metadata: Record<string, string> = {}): grpc.ClientReadableStream<T> {
    return (this.clients[service] as any)[method](request, metadataOf(metadata));
  }

  /** A call that must succeed. */
  async ok<T = any>(service: GrpcServiceName, method: string, request: object, metadata: Record<string, string> = {}): Promise<GrpcReply<T>> {
    const outcome = await this.call<T>(service, method, request, metadata);
    if (!outcome.ok) expect.fail(`${method} failed: ${grpc.status[outcome.failure.code]} ${outcome.failure.info.reason}: ${outcome.failure.details}`);
    return outcome.reply;
  }

  /** A call that must fail with this gRPC code and error code (and `param` where relevant). */
  async fails(
    service: GrpcServiceName,
    method: string,
    request: object,
    metadata: Record<string, string>,
    expected: { code: grpc.status; reason: string; param?: string },
  ): Promise<GrpcFailure> {
    const outcome = await this.call(service, method, request, metadata);
    if (outcome.ok) expect.fail(`${method} succeeded; expected ${expected.reason}`);
    const { failure } = outcome;
    expect(failure.info.reason, failure.details).to.equal(expected.reason);
    expect(failure.info.domain).to.equal("svc");
    expect(grpc.status[failure.code], `gRPC code of ${expected.reason}`).to.equal(grpc.status[expected.code]);
    expect(failure.info.metadata.param).to.equal(expected.param);
    expect(failure.details).to.be.a("string").and.not.empty;
    // The request id travels in the trailers of an error, like the REST envelope's request_id.
    expect(String(failure.metadata.get("x-request-id")[0] ?? "")).to.match(/^req_[A-Za-z0-9]+$/);
    return failure;
  }

  close(): void {
    for (const client of Object.values(this.clients)) client.close();
  }
}

function metadataOf(headers: Record<string, string>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
  return metadata;
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export { grpc };
