// Graceful shutdown: calls running when close() starts finish normally; new connections are refused.
import { connect } from "node:net";
import { expect } from "chai";
import { newWalletId } from "../../src/domain/ids.ts";
import type { WalletCustodian } from "../../src/wallets/custodian.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { expectStandardHeaders } from "../support/headers.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

/** Holds every wallet creation until released, so a live user creation stays in flight as long as needed. */
class HeldCustodian implements WalletCustodian {
  private waiting = 0;
  private arrivals: Array<() => void> = [];
  private releaseAll!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.releaseAll = resolve));

  /** Resolves once `count` creations are waiting. */
  waitingFor(count: number): Promise<void> {
    if (this.waiting >= count) return Promise.resolve();
    return new Promise((resolve) => this.arrivals.push(() => this.waiting >= count && resolve()));
  }

  release(): void {
    this.releaseAll();
  }

  async createWallet(): Promise<{ walletId: string }> {
    this.waiting++;
    for (const arrival of this.arrivals) arrival();
    await this.released;
    return { walletId: newWalletId() };
  }
}

function connectionRefused(address: string): Promise<boolean> {
  const [host, port] = [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    // A connection racing the listener's close may be taken into the backlog and reset instead: not served either.
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED" || error.code === "ECONNRESET"));
  });
}

interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

/** Splits what one HTTP/1.1 connection received into its responses (bodies with Content-Length). */
function parseResponses(raw: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.startsWith("HTTP/1.1 ")) {
    const headEnd = rest.indexOf("\r\n\r\n");
    const [statusLine, ...lines] = rest.slice(0, headEnd).split("\r\n");
    const headers = new Headers(
      lines.map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()] as [string, string]),
    );
    const length = Number(headers.get("content-length") ?? 0);
    responses.push({ status: Number(statusLine!.split(" ")[1]), headers, body: rest.slice(headEnd + 4, headEnd + 4 + length) });
    rest = rest.slice(headEnd + 4 + length);
  }
  return responses;
}

function rawRequest(method: string, path: string, key: string | null, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", ...(key ? [`Authorization: Bearer ${key}`] : []), "Connection: keep-alive"];
  if (body !== undefined) lines.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body ?? ""}`;
}

describe("graceful shutdown", () => {
  it("finishes REST and gRPC calls in flight when close() starts, and refuses new connections", async () => {
    const custodian = new HeldCustodian();
    const svc = await startTestService({ custodian, timings: { walletSyncBudgetMs: 10_000 } });
    const client = new GrpcTestClient(svc.grpcAddress);
    try {
      const restCall = svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: "+14155558001" } });
      const grpcCall = client.call("UsersService", "CreateUser", { phone: "+14155558002" }, bearer(svc.liveKey));
      await custodian.waitingFor(2);

      const closing = svc.app.close();
      expect(await connectionRefused(svc.baseUrl.replace("http://", ""))).to.equal(true);
      expect(await connectionRefused(svc.grpcAddress)).to.equal(true);

      custodian.release();
      const rest = await restCall;
      expect(rest.status, rest.text).to.equal(201);
      expect(rest.body.wallet_status).to.equal("ready");
      const rpc = await grpcCall;
      if (!rpc.ok) expect.fail(`in-flight gRPC call failed: ${grpc.status[rpc.failure.code]} ${rpc.failure.details}`);
      expect(rpc.reply.message.user.wallet_status).to.equal("ready");
      // The last response ends the drain: the client's keep-alive connection must not hold close() up.
      const drainStart = Date.now();
      await closing;
      expect(Date.now() - drainStart).to.be.below(2000);
    } finally {
      client.close();
      await svc.database.close();
    }
  });

  it("closes the connections of REST requests still running when the grace period ends, so the drain goes on", async () => {
    const custodian = new HeldCustodian();
    const svc = await startTestService({ custodian, timings: { walletSyncBudgetMs: 10_000, shutdownGraceMs: 300 } });
    try {
      const restCall = svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: "+14155558004" } }).then(
        (response) => ({ answered: response.status }),
        (error: Error) => ({ failed: String((error.cause as Error | undefined)?.message ?? error.message) }),
      );
      await custodian.waitingFor(1);
      const drainStart = Date.now();
      // close() returns although the request is still held (it is released only in `finally`), and not before
      // the grace period: the connection was cut when the grace period ended.
      await svc.app.close();
      expect(Date.now() - drainStart).to.be.at.least(250);
      expect(await restCall).to.have.property("failed");
    } finally {
      custodian.release();
      await svc.database.close();
    }
  });

  /**
   * Holds a live creation on a keep-alive connection, starts the drain, then sends `next` on that connection:
   * it arrives while the server drains. Answers both responses once the creation is released.
   */
  async function sendDuringDrain(next: (svc: TestService) => string): Promise<[RawResponse | undefined, RawResponse | undefined, string]> {
    const custodian = new HeldCustodian();
    const svc = await startTestService({ custodian, timings: { walletSyncBudgetMs: 10_000 } });
    const socket = connect({ host: "127.0.0.1", port: Number(new URL(svc.baseUrl).port) });
    let received = "";
    socket.on("data", (chunk) => (received += chunk.toString("latin1")));
    const ended = new Promise((resolve) => socket.once("close", resolve));
    try {
      let requestsSeen = 0;
      svc.app.http.server.on("request", () => requestsSeen++);
      const until = async (condition: () => boolean) => {
        while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
      };
      socket.write(rawRequest("POST", "/v1/users", svc.liveKey, JSON.stringify({ phone: uniquePhone() })));
      await custodian.waitingFor(1);
      const closing = svc.app.close();
      await until(() => !svc.app.http.server.listening);
      // The connection is busy, so it is still open: the next request on it arrives while the server drains.
      socket.write(next(svc));
      await until(() => requestsSeen === 2);
      custodian.release();
      await closing;
      await ended;
      const [first, second] = parseResponses(received);
      return [first, second, received];
    } finally {
      socket.destroy();
      await svc.database.close();
    }
  }

  it("serves a request that arrives during the drain on a connection still open, in the envelope's terms", async () => {
    const [first, second, received] = await sendDuringDrain((svc) => rawRequest("GET", "/v1/events", svc.sandboxKey));
    expect(first?.status).to.equal(201);
    expect(second, received).to.not.equal(undefined);
    // Whatever the answer, it is one of the API's: the five headers, a JSON list or the error envelope.
    expectStandardHeaders(second!.headers, "request during the drain");
    expect(second!.status, second!.body).to.equal(200);
    expect(JSON.parse(second!.body).object).to.equal("list");
    expect(second!.headers.get("connection")).to.equal("close");
  });

  // On GRPC_PORT a drain sends GOAWAY, so new gRPC calls go to another process, and Watch streams hear
  // NOT_SERVING (grpc-tooling.spec). A probe on a Connect connection still open asks Check and must hear it too.
  it("answers grpc.health.v1.Health/Check over Connect with NOT_SERVING during the drain", async () => {
    const [first, second, received] = await sendDuringDrain(() => rawRequest("POST", "/grpc.health.v1.Health/Check", null, "{}"));
    expect(first?.status).to.equal(201);
    expect(second, received).to.not.equal(undefined);
    expect(second!.status, second!.body).to.equal(200);
    expect(JSON.parse(second!.body)).to.deep.equal({ status: "NOT_SERVING" });
  });
});
