// One keep-alive HTTP/1.1 connection of the request log's load generator, written on a socket directly: a request
// is its bytes, an answer is read up to its Content-Length. Node's HTTP client spent 300 to 800 µs of CPU per
// request here (its request and response objects, header validation, the agent), as much as the service it loaded,
// on the same two cores; this costs a small part of that, so the cores measure the service and its database.
import { connect, type Socket } from "node:net";

const HEADERS_END = Buffer.from("\r\n\r\n");
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i;

export class RawHttpConnection {
  private readonly socket: Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private answered: ((status: number) => void) | null = null;
  private failed: ((error: Error) => void) | null = null;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.read(chunk));
    socket.on("error", (error) => this.fail(error));
    socket.on("close", () => this.fail(new Error("the service closed the connection")));
  }

  static open(port: number): Promise<RawHttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new RawHttpConnection(socket)));
      socket.once("error", reject);
    });
  }

  /** Sends one request (its head and body as one string); answers its status once the whole answer is read. */
  send(request: string): Promise<number> {
    if (this.answered) throw new Error("one request at a time on a connection");
    return new Promise((resolve, reject) => {
      this.answered = resolve;
      this.failed = reject;
      this.socket.write(request, "latin1");
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = this.buffered.indexOf(HEADERS_END);
    if (headEnd < 0) return;
    const head = this.buffered.toString("latin1", 0, headEnd);
    const length = CONTENT_LENGTH.exec(head);
    if (!length) {
      this.fail(new Error(`an answer without Content-Length: ${head.split("\r\n")[0]}`));
      return;
    }
    const end = headEnd + HEADERS_END.length + Number(length[1]);
    if (this.buffered.length < end) return;
    // Closed loop: nothing more is sent before this answer is read, so nothing follows it.
    this.buffered = Buffer.alloc(0);
    const answered = this.answered;
    this.answered = null;
    this.failed = null;
    answered?.(Number(head.slice(9, 12)));
  }

  private fail(error: Error): void {
    const failed = this.failed;
    this.answered = null;
    this.failed = null;
    failed?.(error);
  }
}
