// Graceful shutdown: calls running when close() starts finish normally; new connections are refused.
import { connect } from "node:net";
import { expect } from "chai";
import { newWalletId } from "../../src/domain/ids.ts";
import type { WalletCustodian } from "../../src/wallets/custodian.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { startTestService } from "../support/test-service.ts";

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
});
