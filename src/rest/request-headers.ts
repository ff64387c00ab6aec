// Reading request headers as one string, whatever way the client repeated them.
import type { FastifyRequest } from "fastify";

/** A header's value; a header sent several times is joined with ", " as HTTP defines. */
export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}
