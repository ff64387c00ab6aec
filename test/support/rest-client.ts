// The suite's HTTP/1.1 client for REST calls: Node's http module on a keep-alive agent. fetch (undici) spent about
// half a millisecond of CPU per request in the suite's profile, most of it in its stream machinery; this keeps the
// part the tests read (status, a Headers object, the text) for a fraction of that. The target is parsed as a WHATWG
// URL first, as fetch does, so a path the tests send is normalised the same way.
import http from "node:http";

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

export class RestClient {
  private readonly agent = new http.Agent({ keepAlive: true });

  constructor(private readonly baseUrl: string) {}

  send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<RawResponse> {
    const url = new URL(this.baseUrl + path);
    const sent = { ...headers };
    if (body !== undefined) sent["content-length"] = String(Buffer.byteLength(body));
    return new Promise((resolve, reject) => {
      const request = http.request(
        { agent: this.agent, host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: sent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () => {
            const received = new Headers();
            const raw = response.rawHeaders;
            for (let i = 0; i < raw.length; i += 2) received.append(raw[i]!, raw[i + 1]!);
            resolve({ status: response.statusCode!, headers: received, text: Buffer.concat(chunks).toString("utf8") });
          });
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
