// Requests written byte for byte on a socket: what no HTTP client would send (malformed lines, huge headers,
// invalid UTF-8, absolute-form targets), and the answer parsed back.
import net from "node:net";

/** Sends raw bytes as one HTTP/1.1 request (Connection: close) and parses the answer. */
export async function rawHttpExchange(
  baseUrl: string,
  request: string | Buffer,
): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const split = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  const raw = text.slice(split + 4);
  return { status: Number(statusLine!.split(" ")[1]), headers, body: raw ? JSON.parse(raw) : undefined };
}
