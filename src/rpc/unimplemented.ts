// A call of a method no service here has (a misspelt method, a service of another server): UNIMPLEMENTED in the
// protocol the caller speaks, as gRPC and Connect servers answer it, with the call's request id.
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { SvcError } from "../domain/errors.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";
import { encodeGrpcMessage } from "./grpc-message.ts";

/** The path of an RPC: `/package.Service/Method`. REST paths (`/v1/...`) have no dot in their first segment. */
const PROCEDURE_PATH = /^\/[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+\/[A-Za-z_]\w*$/;

export function isProcedurePath(path: string): boolean {
  return PROCEDURE_PATH.test(path);
}

export function unimplementedError(path: string): ConnectError {
  return new ConnectError(`The server does not implement the method ${path}.`, Code.Unimplemented);
}

export interface RpcAnswer {
  status: number;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** The answer to `error` for a request of this content type, without a message: gRPC and gRPC-Web answer it trailers-only. */
export function errorAnswer(contentType: string | undefined, failure: SvcError | ConnectError, headers: Record<string, string>): RpcAnswer {
  const error = connectErrorOf(failure);
  const type = contentType?.toLowerCase() ?? "";
  if (type.startsWith("application/grpc")) {
    const status = setTrailerStatus(new Headers(headers), error);
    const answer: Record<string, string> = {
      "content-type": type.startsWith("application/grpc-web") ? "application/grpc-web+proto" : "application/grpc",
    };
    status.forEach((value, name) => {
      answer[name] = name === "grpc-message" ? encodeGrpcMessage(error.rawMessage) : value;
    });
    return { status: 200, headers: answer };
  }
  return {
    status: codeToHttpStatus(error.code),
    headers: { ...headers, "content-type": "application/json" },
    body: errorToJsonBytes(error, {}),
  };
}
