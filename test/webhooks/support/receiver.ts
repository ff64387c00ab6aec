// A real local webhook receiver (on 127.0.0.1 unless told another address; over TLS when given a certificate) whose
// answer each test sets; it records every request read in full, and the connections it accepted.
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";

export interface ReceivedWebhook {
  method: string;
  /** The request target: path and query. */
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  receivedAt: number;
}

export type ReceiverHandler = (req: http.IncomingMessage, res: http.ServerResponse, received: ReceivedWebhook) => void;

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Every connection accepted, in order (a sender keeping its connections open makes fewer). */
  readonly connections: Socket[] = [];
  handler: ReceiverHandler = (_req, res) => res.end("ok");
  private readonly server: http.Server | https.Server;
  private waiters: (() => void)[] = [];
  port = 0;
  host = "127.0.0.1";

  private constructor(tls: https.ServerOptions | undefined) {
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const rawBody = Buffer.concat(chunks).toString("utf8");
        let body: unknown;
        try {
          body = JSON.parse(rawBody);
        } catch {
          body = undefined;
        }
        const received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, rawBody, body, receivedAt: Date.now() };
        this.received.push(received);
        this.notify();
        this.handler(req, res, received);
      });
    };
    this.server = tls ? https.createServer(tls, onRequest) : http.createServer(onRequest);
    // Failed handshakes are the point of some tests: they must not crash the receiver.
    this.server.on("tlsClientError", () => {});
    this.server.on("connection", (socket: Socket) => this.connections.push(socket));
  }

  /**
   * Listens on `host` (a loopback address the machine may not have, such as 127.0.0.2, rejects), over TLS with
   * `tls`'s certificate when given.
   */
  static async start(handler?: ReceiverHandler, host = "127.0.0.1", tls?: https.ServerOptions): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(tls);
    if (handler) receiver.handler = handler;
    await new Promise<void>((resolve, reject) => {
      receiver.server.once("error", reject);
      receiver.server.listen(0, host, resolve);
    });
    receiver.port = (receiver.server.address() as AddressInfo).port;
    receiver.host = host;
    return receiver;
  }

  url(path = "/hooks"): string {
    const host = this.host.includes(":") ? `[${this.host}]` : this.host;
    return `${this.server instanceof https.Server ? "https" : "http"}://${host}:${this.port}${path}`;
  }

  /** Requests received for one event id. */
  forEvent(eventId: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.headers["svc-event-id"] === eventId);
  }

  /** Resolves once `predicate` holds over what was received, or rejects after `timeoutMs`. */
  async waitUntil(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${this.received.length} received)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Closes the connections it holds idle, as a receiver's keep-alive time-out does. */
  closeIdle(): void {
    this.server.closeIdleConnections();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
