// Posting one event to the local receiver of `svc listen`, signed as a delivery is: the same body, the same
// headers and the same `Svc-Signature` scheme, with the listen secret. Redirects are not followed, as deliveries
// never follow them.
import http from "node:http";
import https from "node:https";
import type { StreamEventsResponse } from "../../gen/svc/v1/events_pb.ts";
import { deliveryHeaders } from "../domain/webhook-signature.ts";
import { webhookBodyOf } from "../representations/events.ts";

/** The receiver's answer must come within this, as a delivery's must. */
const FORWARD_TIMEOUT_MS = 10_000;

export interface ForwardOptions {
  url: URL;
  secret: string;
  /** Accept any TLS certificate of an https receiver (a self-signed one on localhost). */
  skipVerify: boolean;
}

/** The receiver's status, or why there was none. */
export type ForwardOutcome = { status: number } | { error: string };

export function forwardEvent(streamed: StreamEventsResponse, options: ForwardOptions): Promise<ForwardOutcome> {
  const event = streamed.event!;
  const body = webhookBodyOf(event, streamed.projectId);
  const headers = {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    ...deliveryHeaders({
      secrets: [options.secret],
      timestamp: Math.floor(Date.now() / 1000),
      body,
      eventId: event.id,
      eventType: event.type,
      attempt: 1,
    }),
  };
  const send = options.url.protocol === "https:" ? https.request : http.request;
  return new Promise((resolve) => {
    const request = send(options.url, { method: "POST", headers, rejectUnauthorized: !options.skipVerify }, (response) => {
      response.resume();
      response.once("end", () => resolve({ status: response.statusCode ?? 0 }));
      response.once("error", (error) => resolve({ error: error.message }));
    });
    request.setTimeout(FORWARD_TIMEOUT_MS, () => request.destroy(new Error(`no answer within ${FORWARD_TIMEOUT_MS / 1000} s`)));
    request.once("error", (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    request.end(body);
  });
}
