// Connections to GRPC_PORT are bounded like those of PORT: a connection that opens no stream in time (raw TCP
// that never speaks, half a preface, an HTTP/2 session without a call, one that only sends PINGs) is closed,
// a session whose last stream closed is closed after the idle timeout, a session with a stream open is never
// cut, and one client address holds at most SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS connections. All traffic stays
// on loopback; other client addresses are taken from 127.0.0.0/8.
import http2 from "node:http2";
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { capturedLogLines } from "../support/log-capture.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const IDLE_MS = 1000;
/** Slack for timers on a busy machine. */
const SLACK_MS = 2000;

const HEALTH_CHECK = "/grpc.health.v1.Health/Check";
const HEALTH_WATCH = "/grpc.health.v1.Health/Watch";
/** An enveloped empty message: HealthCheckRequest for the whole server (""). */
const EMPTY_MESSAGE = Buffer.from([0, 0, 0, 0, 0]);

function portOf(address: string): number {
  return Number(address.split(":")[1]);
}

interface RawConnection {
  socket: net.Socket;
  connectedAt: number;
  /** Resolves with the time the connection was closed (by the server: the client never closes it). */
  closed: Promise<number>;
  received: () => number;
}

/** A TCP connection that sends nothing (or `send`) and keeps what it receives. */
function rawConnect(port: number, localAddress = "127.0.0.1", send?: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress });
    let received = 0;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.byteLength;
    });
    // A reset is one way of being closed.
    socket.on("error", () => {});
    const closed = new Promise<number>((done) => socket.once("close", () => done(performance.now())));
    socket.once("connect", () => {
      socket.off("error", reject);
      if (send !== undefined) socket.write(send);
      resolve({ socket, connectedAt: performance.now(), closed, received: () => received });
    });
    socket.once("error", reject);
  });
}

interface Session {
  session: http2.ClientHttp2Session;
  openedAt: number;
  closed: Promise<number>;
  goaway: Promise<number>;
}

function connectSession(address: string, localAddress = "127.0.0.1"): Promise<Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`, {
      createConnection: () => net.connect({ port: portOf(address), host: "127.0.0.1", localAddress }),
    });
    const closed = new Promise<number>((done) => session.once("close", () => done(performance.now())));
    const goaway = new Promise<number>((done) => session.once("goaway", (code: number) => done(code)));
    session.on("error", () => {});
    session.once("connect", () => resolve({ session, openedAt: performance.now(), closed, goaway }));
    session.once("error", reject);
  });
}

/** A grpc.health.v1 Check on the session; resolves with its grpc-status. */
function healthCheck(session: http2.ClientHttp2Session): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": HEALTH_CHECK, "content-type": "application/grpc", te: "trailers" });
    stream.on("trailers", (trailers) => resolve(String(trailers["grpc-status"])));
    stream.on("error", reject);
    stream.resume();
    stream.end(EMPTY_MESSAGE);
  });
}

/** A grpc.health.v1 Watch left open; resolves once its first answer (SERVING) has arrived. */
function openWatch(session: http2.ClientHttp2Session): Promise<http2.ClientHttp2Stream> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": HEALTH_WATCH, "content-type": "application/grpc", te: "trailers" });
    stream.once("data", () => resolve(stream));
    stream.once("error", reject);
    stream.end(EMPTY_MESSAGE);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectClosedAfterIdle(since: number, closedAt: number, label: string): void {
  const elapsed = closedAt - since;
  expect(elapsed, label).to.be.at.least(IDLE_MS - 100);
  expect(elapsed, label).to.be.below(IDLE_MS + SLACK_MS);
}

describe("connections to GRPC_PORT", () => {
  describe(`with a ${IDLE_MS} ms idle timeout and at most 5 connections per address`, () => {
    let svc: TestService;
    let port: number;
    before(async () => {
      svc = await startTestService({ env: { SVC_GRPC_IDLE_TIMEOUT_MS: String(IDLE_MS), SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS: "5" } });
      port = portOf(svc.grpcAddress);
    });
    after(async () => {
      await svc.stop();
    });

    it("closes a TCP connection that never speaks, and one that sends half the preface, after the idle timeout", async () => {
      const silent = await rawConnect(port);
      const halfPreface = await rawConnect(port, "127.0.0.1", "PRI * HTTP/2.0\r\n");
      expectClosedAfterIdle(silent.connectedAt, await silent.closed, "silent");
      expectClosedAfterIdle(halfPreface.connectedAt, await halfPreface.closed, "half a preface");
    });

    it("closes an HTTP/2 session that opens no stream: GOAWAY without error, then the connection", async () => {
      const { session, openedAt, closed, goaway } = await connectSession(svc.grpcAddress);
      expect(await goaway).to.equal(http2.constants.NGHTTP2_NO_ERROR);
      expectClosedAfterIdle(openedAt, await closed, "session");
      expect(session.destroyed).to.equal(true);
    });

    it("does not count PINGs as requests: a session that only pings is closed all the same", async () => {
      const { session, openedAt, closed } = await connectSession(svc.grpcAddress);
      let acknowledged = 0;
      const pinger = setInterval(() => {
        if (!session.closed) session.ping((error) => (error ? undefined : acknowledged++));
      }, 100);
      try {
        expectClosedAfterIdle(openedAt, await closed, "pinging session");
        expect(acknowledged).to.be.at.least(3);
      } finally {
        clearInterval(pinger);
      }
    });

    it("never cuts a session with a stream open: a health Watch held past the timeout with PINGs; closed once it ends", async () => {
      const { session, closed } = await connectSession(svc.grpcAddress);
      const pinger = setInterval(() => {
        if (!session.closed) session.ping(() => {});
      }, 200);
      try {
        const watch = await openWatch(session);
        let watchError: unknown;
        watch.on("error", (error) => {
          watchError = error;
        });
        await sleep(IDLE_MS * 3);
        expect(session.closed, "session closed under an open Watch").to.equal(false);
        expect(watch.closed, "Watch closed").to.equal(false);
        expect(watchError).to.equal(undefined);
        // The call still works at the end, and a second one on the same session too.
        expect(await healthCheck(session)).to.equal("0");
        const ended = performance.now();
        watch.close(http2.constants.NGHTTP2_CANCEL);
        expectClosedAfterIdle(ended, await closed, "session after its Watch");
      } finally {
        clearInterval(pinger);
        session.destroy();
      }
    });

    it("restarts the idle time after each call: calls every half timeout keep a session, closed one timeout after the last", async () => {
      const { session, closed } = await connectSession(svc.grpcAddress);
      try {
        for (let call = 0; call < 6; call++) {
          expect(await healthCheck(session)).to.equal("0");
          await sleep(IDLE_MS / 2);
        }
        expect(session.closed).to.equal(false);
        expect(await healthCheck(session)).to.equal("0");
        expectClosedAfterIdle(performance.now(), await closed, "session after its last call");
      } finally {
        session.destroy();
      }
    });

    it("a stock grpc-js client with keep-alive PINGs: its Watch runs on; after its idle session is closed, its next call reconnects", async () => {
      const bytes = (value: Buffer) => value;
      const client = new grpc.Client(svc.grpcAddress, grpc.credentials.createInsecure(), {
        "grpc.keepalive_time_ms": 200,
        "grpc.keepalive_permit_without_calls": 1,
      });
      const check = () =>
        new Promise<void>((resolve, reject) =>
          client.makeUnaryRequest(HEALTH_CHECK, bytes, bytes, Buffer.alloc(0), (error) => (error ? reject(error) : resolve())),
        );
      try {
        const watch = client.makeServerStreamRequest(HEALTH_WATCH, bytes, bytes, Buffer.alloc(0));
        const statuses: Buffer[] = [];
        let watchError: grpc.ServiceError | undefined;
        watch.on("data", (message: Buffer) => statuses.push(message));
        watch.on("error", (error: grpc.ServiceError) => {
          watchError = error;
        });
        await sleep(IDLE_MS * 3);
        expect(statuses).to.have.length(1);
        expect(watchError).to.equal(undefined);
        watch.cancel();
        await check();
        // The session goes idle and is closed (the channel with it); the channel reconnects for the next call.
        await sleep(IDLE_MS + SLACK_MS);
        expect(client.getChannel().getConnectivityState(false)).to.equal(grpc.connectivityState.IDLE);
        await check();
      } finally {
        client.close();
      }
    });

    it("closes a connection over the per-address maximum at once, before any HTTP/2; other addresses and freed places are served", async () => {
      const address = "127.0.0.21";
      const held: Session[] = [];
      try {
        // Five sessions with a Watch open each: busy, never idle.
        for (let i = 0; i < 5; i++) {
          const opened = await connectSession(svc.grpcAddress, address);
          await openWatch(opened.session);
          held.push(opened);
        }
        const linesBefore = capturedLogLines.length;
        const refused: RawConnection[] = [];
        for (let i = 0; i < 3; i++) refused.push(await rawConnect(port, address));
        for (const connection of refused) {
          expect((await connection.closed) - connection.connectedAt, "closed on arrival").to.be.below(IDLE_MS / 2);
          expect(connection.received(), "not even the server's SETTINGS").to.equal(0);
        }
        expect(held.every(({ session }) => !session.closed)).to.equal(true);
        // Logged once, not once per connection.
        const warnings = capturedLogLines.slice(linesBefore).filter((line) => line.includes("gRPC connections refused"));
        expect(warnings).to.have.length(1);
        expect(JSON.parse(warnings[0]!)).to.include({ level: "warn", remote_address: address, refused: 1, max_connections_per_address: 5 });

        const other = await connectSession(svc.grpcAddress, "127.0.0.22");
        expect(await healthCheck(other.session)).to.equal("0");
        other.session.destroy();

        held.shift()!.session.destroy();
        await sleep(200);
        const freed = await connectSession(svc.grpcAddress, address);
        expect(await healthCheck(freed.session)).to.equal("0");
        freed.session.destroy();
      } finally {
        for (const { session } of held) session.destroy();
      }
    });
  });

  describe("with the defaults (10 s idle timeout, 100 connections per address)", () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService();
    });
    after(async () => {
      await svc.stop();
    });

    it("closes 1,100 idle connections from 12 addresses within 15 s, while REST answers throughout", async function () {
      this.timeout(60_000);
      const port = portOf(svc.grpcAddress);
      const addresses = Array.from({ length: 12 }, (_, i) => `127.0.0.${i + 2}`);
      const connections: RawConnection[] = [];
      for (let i = 0; i < 1100; i += 100) {
        const batch = Array.from({ length: Math.min(100, 1100 - i) }, (_, j) => rawConnect(port, addresses[(i + j) % addresses.length]));
        connections.push(...(await Promise.all(batch)));
      }
      const firstConnected = Math.min(...connections.map((c) => c.connectedAt));
      const lastConnected = Math.max(...connections.map((c) => c.connectedAt));
      let open = connections.length;
      for (const connection of connections) void connection.closed.then(() => open--);

      // While they are held, REST answers: /healthz and a keyed /v1 call.
      let restChecks = 0;
      while (open > 0 && performance.now() - firstConnected < 20_000) {
        const health = await fetch(`${svc.baseUrl}/healthz`);
        expect(health.status).to.equal(200);
        await health.arrayBuffer();
        const list = await svc.request("GET", "/v1/users?limit=1");
        expect(list.status).to.equal(200);
        restChecks++;
        await sleep(250);
      }
      const closedAt = await Promise.all(connections.map((c) => c.closed));
      const lifetimes = connections.map((c, i) => closedAt[i]! - c.connectedAt);
      const lastClosed = Math.max(...closedAt);
      expect(Math.max(...lifetimes), "longest connection").to.be.below(15_000);
      expect(Math.min(...lifetimes), "shortest connection").to.be.at.least(9_900);
      expect(restChecks).to.be.at.least(10);
      if (process.env.SVC_TEST_VERBOSE) {
        console.log(
          `1,100 connections opened in ${Math.round(lastConnected - firstConnected)} ms; all closed ${Math.round(lastClosed - firstConnected)} ms after the first opened (${Math.round(lastClosed - lastConnected)} ms after the last); lifetimes ${Math.round(Math.min(...lifetimes))}..${Math.round(Math.max(...lifetimes))} ms`,
        );
      }
    });
  });
});
