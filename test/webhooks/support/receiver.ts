// A real local webhook receiver on 127.0.0.1 whose answer each test sets; it records every request read in full.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  receivedAt: number;
}

export type ReceiverHandler = (req: http.IncomingMessage, res: http.ServerResponse, received: ReceivedWebhook) => void;

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  handler: ReceiverHandler = (_req, res) => res.end("ok");
  private readonly server = http.createServer((req, res) => {
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
      const received = { headers: req.headers, rawBody, body, receivedAt: Date.now() };
      this.received.push(received);
      this.notify();
      this.handler(req, res, received);
    });
  });
  private waiters: (() => void)[] = [];
  port = 0;

  static async start(handler?: ReceiverHandler): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    if (handler) receiver.handler = handler;
    await new Promise<void>((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
    receiver.port = (receiver.server.address() as AddressInfo).port;
    return receiver;
  }

  url(path = "/hooks"): string {
    return `http://127.0.0.1:${this.port}${path}`;
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

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
