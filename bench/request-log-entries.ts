// The request log's entries of the two loads' calls, as the pipeline builds them (its own function), for the
// benchmarks that record or insert them outside any request (bench/request-log-alone.ts, request-log-inserts.ts).
import { randomUUID } from "node:crypto";
import type { Principal } from "../src/access/principal.ts";
import { newRequestId } from "../src/domain/ids.ts";
import { requestLogEntry } from "../src/pipeline/request-log-entry.ts";
import type { RequestLogDocument } from "../src/store/request-log-repository.ts";

export type RequestLogLoad = "rest-read" | "users-create";

/**
 * The entry of a call of `load`: a GET of a user, or a POST creating one with an Idempotency-Key. Its id is a fresh
 * request id, as a call's is: the call's time, then random digits.
 */
export function loadEntry(load: RequestLogLoad, principal: Principal): RequestLogDocument {
  const read = load === "rest-read";
  return requestLogEntry({
    logId: newRequestId(),
    source: "rest",
    method: null,
    route: read
      ? { verb: "GET", path: "/v1/users/usr_alone", template: "/v1/users/{id}", successStatus: 200 }
      : { verb: "POST", path: "/v1/users", template: "/v1/users", successStatus: 201 },
    principal,
    // A fresh UUID, as the load's clients send (bench/request-log-load.ts): each lands at a random place of its index.
    idempotencyKey: read ? null : randomUUID(),
    replayed: false,
    refusal: null,
    durationMs: 3,
    createdAt: new Date(),
  });
}
