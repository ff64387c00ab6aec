// Keep-alive connections for delivery attempts, pooled by the address an attempt vetted. Every attempt still
// resolves and vets its host first; it then takes a connection of the pool of that address, so a connection opened
// to an address vetted earlier carries a later attempt only when that attempt vetted the same address again (a
// name that now resolves elsewhere, DNS rebinding, gets the pool of its new address). Opening and closing a TCP
// connection per attempt cost the delivering process about a tenth of its main thread, and the receiver as much.
import http from "node:http";
import https from "node:https";
import type { VettedAddress } from "./address-vetting.ts";

/**
 * An idle connection closes after this: under the 5 s keep-alive time-out of Node's servers, a common receiver,
 * so ours closes first (a receiver that hints a shorter one in `Keep-Alive` is heeded by Node's agent).
 */
const IDLE_MS = 4000;
/** Pools kept; past it the oldest is dropped (its idle connections close by their time-out, busy ones finish). */
const MAX_POOLS = 1024;

export interface PoolPlace {
  secure: boolean;
  pinned: VettedAddress;
  port: number;
  /** The URL's host name: the Host header and, over https, the certificate's name. */
  hostname: string;
}

export class AttemptConnections {
  private readonly pools = new Map<string, http.Agent>();

  /** The pool of connections to this vetted address, for this host name. */
  agentFor(place: PoolPlace): http.Agent {
    const key = `${place.secure ? "https" : "http"} ${place.pinned.address} ${place.port} ${place.hostname}`;
    let agent = this.pools.get(key);
    if (agent === undefined) {
      if (this.pools.size >= MAX_POOLS) this.pools.delete(this.pools.keys().next().value!);
      const options = { keepAlive: true, timeout: IDLE_MS, scheduling: "lifo" as const };
      agent = place.secure ? new https.Agent(options) : new http.Agent(options);
      this.pools.set(key, agent);
    }
    return agent;
  }

  /** Closes every idle connection (the process is stopping); attempts still running keep theirs. */
  closeIdle(): void {
    for (const agent of this.pools.values()) {
      for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
    }
  }
}
