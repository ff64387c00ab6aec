// Bounds on the connections of GRPC_PORT, so that clients which connect and then do nothing (raw TCP that never
// speaks, a half-open connection whose peer is gone, an HTTP/2 session that never starts a call) cannot hold the
// process's file descriptors: the HTTP/1.1 server on PORT has the same through Node's headers and keep-alive
// time-outs, which HTTP/2 lacks.
//
// - A connection must open its first stream within `firstStreamTimeoutMs` of being accepted (the preface, the
//   settings and a complete HEADERS frame all arrive by then), and a session with no stream open for
//   `idleTimeoutMs` is closed: GOAWAY, then the socket. Only streams count: bytes, PINGs and SETTINGS do not
//   keep a session open, and nothing is ever cut while a stream is open (a server-streaming health Watch, a
//   long call; a request body's own deadline is the receive time-out's).
// - One client address holds at most `maxConnectionsPerAddress` connections at once; a connection over it is
//   closed as soon as it is accepted, before any HTTP/2 state is made for it. Refusals are reported at most
//   once a minute, with their number, so a client hammering the port cannot flood the logs.
import type http2 from "node:http2";
import type { Socket } from "node:net";

export interface ConnectionLimits {
  /** A connection that has not opened a stream this long after it was accepted is closed. */
  firstStreamTimeoutMs: number;
  /** A session that has had no stream open this long is closed. */
  idleTimeoutMs: number;
  /** Connections one client address may hold open at once. */
  maxConnectionsPerAddress: number;
  /**
   * Hears of connections closed on arrival (their address held the maximum already): at most once every
   * REFUSAL_REPORT_MS, with the number refused since the last report and the address of the latest.
   */
  onRefused: (report: { address: string; refused: number }) => void;
}

const REFUSAL_REPORT_MS = 60_000;

/** After the GOAWAY, how long a session may take to flush it (a peer that does not read) before it is destroyed. */
const GOAWAY_FLUSH_MS = 1000;

type ConnectionListener = (this: http2.Http2Server, socket: Socket) => void;

/** Applies the limits to every connection `server` accepts from now on. */
export function limitConnections(server: http2.Http2Server, limits: ConnectionLimits): void {
  const open = new Map<string, number>();
  let refused = 0;
  let reportedAt = Number.NEGATIVE_INFINITY;
  // Node's own listener makes the HTTP/2 session of a connection: it runs only for connections under the cap.
  const makeSession = server.listeners("connection")[0] as ConnectionListener;
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    // Reset before it could be read: nobody to serve.
    if (address === undefined) {
      socket.destroy();
      return;
    }
    const held = open.get(address) ?? 0;
    if (held >= limits.maxConnectionsPerAddress) {
      socket.destroy();
      refused += 1;
      if (performance.now() - reportedAt >= REFUSAL_REPORT_MS) {
        reportedAt = performance.now();
        limits.onRefused({ address, refused });
        refused = 0;
      }
      return;
    }
    open.set(address, held + 1);
    socket.once("close", () => {
      const left = open.get(address)! - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
    makeSession.call(server, socket);
  });
  server.on("session", (session) => closeWhenIdle(session, limits));
}

function closeWhenIdle(session: http2.ServerHttp2Session, limits: ConnectionLimits): void {
  let streams = 0;
  let idle: NodeJS.Timeout | undefined;
  const expire = () => {
    if (streams > 0 || session.closed || session.destroyed) return;
    // GOAWAY (no error), then the socket once it is written; a peer that reads nothing does not hold it up.
    session.close();
    setTimeout(() => session.destroy(), GOAWAY_FLUSH_MS).unref();
  };
  const first = setTimeout(expire, limits.firstStreamTimeoutMs).unref();
  session.on("stream", (stream: http2.ServerHttp2Stream) => {
    streams += 1;
    clearTimeout(first);
    stream.once("close", () => {
      streams -= 1;
      if (streams > 0 || session.closed || session.destroyed) return;
      // One timer per session, restarted each time its last stream closes (expire ignores it while one is open).
      if (idle === undefined) idle = setTimeout(expire, limits.idleTimeoutMs).unref();
      else idle.refresh();
    });
  });
  session.once("close", () => {
    clearTimeout(first);
    clearTimeout(idle);
  });
}
