// One request id per call: the HTTP/1.1 server hands Fastify's id to Connect, the HTTP/2 server draws one,
// and every log line, the response headers and the trailers carry it.
import { createContextKey, createContextValues, type ContextValues } from "@connectrpc/connect";
import { newRequestId } from "../domain/ids.ts";

export const requestIdKey = createContextKey<string>("", { description: "request id" });
export const clientAddressKey = createContextKey<string>("unknown", { description: "client address" });

/** The context of an RPC: its request id (a new one unless the server already has one) and the caller's address. */
export function callContextValues(address: string | undefined, requestId: string = newRequestId()): ContextValues {
  return createContextValues()
    .set(clientAddressKey, address ?? "unknown")
    .set(requestIdKey, requestId);
}
