// How each public method's answer becomes a REST response: its status and JSON body.
import type { Message } from "@bufbuild/protobuf";

export interface RestResponse {
  status: number;
  body: unknown;
}

/** `path` is the request path without its query string (the `url` of lists). */
export type Responder = (response: never, path: string) => RestResponse;

export type ResponderTable = Record<string, Responder>;

export function responderKey(method: { parent: { typeName: string }; name: string }): string {
  return `${method.parent.typeName}.${method.name}`;
}

export function respond(table: ResponderTable, method: { parent: { typeName: string }; name: string }, response: Message, path: string): RestResponse {
  const responder = table[responderKey(method)];
  if (!responder) throw new Error(`no REST responder for ${responderKey(method)}`);
  return responder(response as never, path);
}
