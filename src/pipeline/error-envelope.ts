// The error envelope (docs/contract.md, Error envelope): `{ error: { type, code, message, param?, request_id } }`.
import type { DescribedError } from "../domain/errors.ts";

export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    request_id: string;
  };
}

export function errorEnvelope(described: DescribedError, requestId: string): ErrorEnvelope {
  return {
    error: {
      type: described.definition.type,
      code: described.code,
      message: described.message,
      ...(described.param !== undefined ? { param: described.param } : {}),
      request_id: requestId,
    },
  };
}
