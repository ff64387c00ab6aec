// The catalogue's errors in Connect's form, for every RPC answer (Connect, gRPC-Web, gRPC): the gRPC status the
// catalogue names, and a google.rpc.ErrorInfo detail whose reason is the Svc code and whose metadata holds the
// param and the other details, so every client reads the code as REST clients do.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { ERROR_CATALOGUE, type RpcStatus, SvcError } from "../domain/errors.ts";

/** ErrorInfo's domain for the Svc codes. */
const ERROR_DOMAIN = "svc";

const CONNECT_CODES: Record<RpcStatus, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  aborted: Code.Aborted,
  permission_denied: Code.PermissionDenied,
  resource_exhausted: Code.ResourceExhausted,
  unauthenticated: Code.Unauthenticated,
  internal: Code.Internal,
  unavailable: Code.Unavailable,
};

/**
 * Any thrown value as a ConnectError: a catalogue error with its code and ErrorInfo; a ConnectError (Connect's own,
 * such as a deadline) as it is; anything else as Connect reports an unknown failure.
 */
export function connectErrorOf(error: unknown): ConnectError {
  if (!(error instanceof SvcError)) return ConnectError.from(error);
  const metadata: Record<string, string> = { ...error.metadata };
  if (error.param !== undefined) metadata.param = error.param;
  const info = create(ErrorInfoSchema, { reason: error.code, domain: ERROR_DOMAIN, metadata });
  const code = CONNECT_CODES[ERROR_CATALOGUE[error.code].rpcStatus];
  return new ConnectError(error.message, code, undefined, [{ desc: ErrorInfoSchema, value: info }], error);
}
