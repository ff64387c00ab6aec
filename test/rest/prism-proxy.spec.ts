// Prism's validating proxy (`prism proxy --errors`) between a client and the service: a sample of every operation
// and of every error status goes through it, and Prism, reading the served document as integrators' tools do, must
// find no violation in any request or response. With --errors Prism answers a violation itself, as an
// application/problem+json error (422 for a request, 500 for a response, their `validation` listing what broke);
// without it, it would pass the answer on with an `sl-violations` header. The test refuses both.
//
// Two statuses cannot reach the service through Prism: Prism answers a body that is not application/json itself
// (422, "Supported content types", where the service says 415), and it re-serialises the JSON it forwards, so no body
// the schemas allow (every field is bounded) is past 64 KiB (413). The service's real 413 and 415 answers are sent
// through Prism instead: Prism's upstream is a relay to the service that replays a recorded answer to a valid request
// carrying `x-svc-replay`, so Prism still judges them.
//
// HEAD is not sent through Prism: its proxy parses every answer with a JSON content type as JSON, and a HEAD answer
// has none (Prism then fails with its own 500, "invalid json response body"). The HEAD of the document is checked
// against the document by the suite's contract hook (openapi.spec) instead.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type Server } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { uniquePhone, uniquePhoneEnding } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const PRISM = join(import.meta.dirname, "..", "..", "node_modules", ".bin", "prism");
/** Low enough that the sample can reach 429, high enough for the sample itself. */
const RATE_LIMIT = 90;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

class Prism {
  private log = "";
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  /** `prism proxy --errors` for `document` in front of `upstream`, once it listens. */
  static async start(document: unknown, upstream: string, dir: string): Promise<Prism> {
    // --no-cors: Prism would answer preflights itself and add CORS headers to every answer; the service's own are judged.
    const file = join(dir, `openapi-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(document));
    const port = await freePort();
    const child = spawn(PRISM, ["proxy", "--errors", "--no-cors", "--host", "127.0.0.1", "--port", String(port), file, upstream], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const prism = new Prism(child, `http://127.0.0.1:${port}`);
    await new Promise<void>((resolve, reject) => {
      // Prism takes a few seconds to start on a quiet machine, much longer on a loaded one.
      const timer = setTimeout(() => reject(new Error(`Prism did not start within 60 s:\n${prism.log}`)), 60_000);
      const read = (chunk: Buffer) => {
        prism.log += chunk;
        if (prism.log.includes("Prism is listening")) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on("data", read);
      child.stderr!.on("data", read);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`Prism exited (${code}) before listening:\n${prism.log}`));
      });
    });
    return prism;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    await exited;
  }
}

/** What Prism says is wrong with an exchange: its own problem answer or an sl-violations header; empty when nothing. */
function violationsOf(answer: Answer): string {
  const header = answer.headers.get("sl-violations");
  if (header) return `sl-violations: ${header}`;
  if (answer.headers.get("content-type")?.startsWith("application/problem+json")) return `Prism answered ${answer.status}: ${answer.text}`;
  return "";
}

describe("Prism's validating proxy (prism proxy --errors) in front of the service", function () {
  this.timeout(90_000);
  let svc: TestService;
  let prism: Prism;
  let dir: string;
  let document: any;
  /** Every exchange made through Prism, `METHOD path -> status`, and what Prism found wrong with each. */
  const exchanges: { name: string; status: number; violations: string }[] = [];

  async function call(
    method: string,
    path: string,
    init: { body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? svc.sandboxKey : init.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const body = init.rawBody ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined);
    if (body !== undefined) headers["content-type"] ??= "application/json";
    const response = await fetch(prism.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const answer = { status: response.status, headers: response.headers, body: parsed, text };
    exchanges.push({ name: `${method} ${path.split("?")[0]} -> ${answer.status}`, status: answer.status, violations: violationsOf(answer) });
    return answer;
  }

  /** A call whose status must be `status`. */
  async function expectStatus(status: number, method: string, path: string, init?: Parameters<typeof call>[2]) {
    const answer = await call(method, path, init);
    expect(answer.status, `${method} ${path}: ${answer.text}`).to.equal(status);
    return answer.body;
  }

  /** Recorded answers the relay replays, by the request's `x-svc-replay`. */
  const replays = new Map<string, { status: number; headers: Headers; text: string }>();
  let relay: Server;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-prism-"));
    svc = await startTestService({ env: { SVC_RATE_LIMIT: String(RATE_LIMIT) } });
    document = (await svc.request("GET", "/v1/openapi.json", { key: null })).body;
    const upstream = new URL(svc.baseUrl);
    relay = createHttpServer((request, response) => {
      const replay = replays.get(String(request.headers["x-svc-replay"]));
      if (replay) {
        request.resume();
        const hopByHop = ["connection", "keep-alive", "transfer-encoding", "content-length"];
        const headers = Object.fromEntries([...replay.headers].filter(([name]) => !hopByHop.includes(name)));
        request.on("end", () => response.writeHead(replay.status, headers).end(replay.text));
        return;
      }
      const forwarded = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(response);
        },
      );
      request.pipe(forwarded);
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    prism = await Prism.start(document, `http://127.0.0.1:${(relay.address() as { port: number }).port}`, dir);
  });

  after(async () => {
    await prism?.stop();
    if (relay) await new Promise((resolve) => relay.close(resolve));
    await svc?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("passes a sample of every operation and every error status with no violation", async () => {
    await expectStatus(200, "GET", "/v1/openapi.json", { key: null });
    const preflight = await call("OPTIONS", "/v1/openapi.json", {
      key: null,
      headers: { origin: "https://docs.example.com", "access-control-request-method": "GET" },
    });
    // The service's answer, not one Prism made up for the preflight.
    expect([preflight.status, preflight.headers.get("access-control-allow-methods")]).to.deep.equal([204, "GET, HEAD, OPTIONS"]);
    expect(preflight.headers.get("x-request-id")).to.match(/^req_/);

    // Webhook endpoints first, so the events below have deliveries. Port 9 (discard) answers nothing.
    const endpoint = await expectStatus(201, "POST", "/v1/webhook-endpoints", {
      body: { url: "http://127.0.0.1:9/hooks", event_types: ["user.created", "kyc.approved"], description: "prism sample" },
    });
    await expectStatus(200, "GET", "/v1/webhook-endpoints");
    await expectStatus(200, "GET", `/v1/webhook-endpoints/${endpoint.id}`);
    await expectStatus(200, "PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { description: "renamed" } });
    await expectStatus(200, "POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { body: { grace_period_hours: 1 } });
    await expectStatus(200, "POST", `/v1/webhook-endpoints/${endpoint.id}/test`);

    // Users.
    const phone = uniquePhone();
    const user = await expectStatus(201, "POST", "/v1/users", {
      body: { phone, external_id: null, email: "ada@example.com", first_name: "Ada", country: "gb" },
      headers: { "idempotency-key": "prism-create-user" },
    });
    await expectStatus(200, "GET", "/v1/users?limit=5");
    await expectStatus(200, "GET", `/v1/users/${user.id}`);
    await expectStatus(200, "PATCH", `/v1/users/${user.id}`, { body: { last_name: "Lovelace", email: null } });
    await expectStatus(200, "GET", `/v1/users/${user.id}/wallets`);
    await expectStatus(200, "GET", "/v1/signup-config");

    // Phone verification (sandbox code 000000), then once more: already_verified.
    await expectStatus(200, "POST", `/v1/users/${user.id}/verification`, { body: { channel: "sms" } });
    await expectStatus(200, "POST", `/v1/users/${user.id}/verification/check`, { body: { code: "000000" } });
    await expectStatus(200, "GET", `/v1/users/${user.id}/verification`);
    await expectStatus(409, "POST", `/v1/users/${user.id}/verification/check`, { body: { code: "000000" } });
    const unreachable = await expectStatus(201, "POST", "/v1/users", { body: { phone: uniquePhoneEnding("0503") } });
    await expectStatus(503, "POST", `/v1/users/${unreachable.id}/verification`, { body: { channel: "sms" } });

    // KYC sessions.
    const session = await expectStatus(201, "POST", `/v1/users/${user.id}/kyc-sessions`, { body: { return_url: "https://app.example.com/done" } });
    await expectStatus(200, "GET", `/v1/kyc-sessions/${session.id}`);
    await expectStatus(200, "GET", `/v1/users/${user.id}/kyc-sessions`);
    await expectStatus(200, "POST", `/v1/sandbox/kyc-sessions/${session.id}/submit`);
    await expectStatus(200, "POST", `/v1/sandbox/kyc-sessions/${session.id}/approve`);
    await expectStatus(409, "POST", `/v1/kyc-sessions/${session.id}/cancel`);
    await expectStatus(403, "POST", `/v1/sandbox/kyc-sessions/${session.id}/approve`, { key: svc.liveKey });
    const other = await expectStatus(201, "POST", "/v1/users", { body: { phone: uniquePhone() } });
    const rejected = await expectStatus(201, "POST", `/v1/users/${other.id}/kyc-sessions`, { body: {} });
    await expectStatus(200, "POST", `/v1/sandbox/kyc-sessions/${rejected.id}/reject`, { body: { reason: "Document expired" } });
    const canceled = await expectStatus(201, "POST", `/v1/users/${other.id}/kyc-sessions`);
    await expectStatus(200, "POST", `/v1/kyc-sessions/${canceled.id}/cancel`);

    // Money: the user's KYC is approved.
    const deposit = await expectStatus(201, "POST", `/v1/sandbox/users/${user.id}/deposits`, {
      body: { amount_usd: 100.5, fee_usd: 0.5, complete_after_seconds: 3600 },
    });
    await expectStatus(200, "POST", `/v1/sandbox/transactions/${deposit.id}/complete`);
    const failing = await expectStatus(201, "POST", `/v1/sandbox/users/${user.id}/deposits`, {
      body: { amount_usd: 20, complete_after_seconds: 3600 },
    });
    await expectStatus(200, "POST", `/v1/sandbox/transactions/${failing.id}/fail`, { body: { failure_code: "simulated_failure" } });
    const withdrawal = await expectStatus(201, "POST", `/v1/users/${user.id}/withdrawals`, { body: { amount_usd: 25, description: "Payout" } });
    await expectStatus(200, "POST", `/v1/transactions/${withdrawal.id}/cancel`);
    await expectStatus(200, "GET", `/v1/transactions/${withdrawal.id}`);
    await expectStatus(200, "GET", `/v1/users/${user.id}/transactions?type=deposit`);
    await expectStatus(409, "POST", `/v1/users/${other.id}/withdrawals`, { body: { amount_usd: 5 } });

    // Events and deliveries.
    const events = await expectStatus(200, "GET", "/v1/events?type=user.created");
    await expectStatus(200, "GET", `/v1/events/${events.data[0].id}`);
    const deliveries = await expectStatus(200, "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(deliveries.data, "deliveries of the sample's events").to.not.be.empty;
    await expectStatus(200, "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveries.data[0].id}`);
    await call("POST", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveries.data[0].id}/replay`);
    await expectStatus(200, "POST", `/v1/webhook-endpoints/${endpoint.id}/recover`, {
      body: { since: new Date(Date.now() - 3_600_000).toISOString() },
    });

    // Errors the document allows a client to send: each is valid against its schema and refused by the server.
    await expectStatus(400, "GET", "/v1/users?starting_after=999999998");
    await expectStatus(401, "GET", "/v1/events", { key: "svc_test_thisKeyDoesNotExist000000000000" });
    await expectStatus(404, "GET", "/v1/users/999999999");
    await expectStatus(409, "POST", "/v1/users", { body: { phone } });
    // An unassigned country code: the pattern allows it, the server's list does not.
    await expectStatus(422, "POST", "/v1/users", { body: { phone: uniquePhone(), country: "XX" } });
    await expectStatus(422, "POST", "/v1/users", { body: { phone: uniquePhone() }, headers: { "idempotency-key": "prism-create-user" } });
    await expectStatus(200, "DELETE", `/v1/webhook-endpoints/${endpoint.id}`);
    // The rest of the key's quota, then 429; twice the quota, since a window may end while the loop runs and the
    // next one counts from zero (a run under coverage once saw no 429 in one quota's worth).
    let limited: Answer | undefined;
    for (let i = 0; i <= 2 * RATE_LIMIT && !limited; i++) {
      const answer = await call("GET", "/v1/signup-config");
      if (answer.status === 429) limited = answer;
    }
    expect(limited?.status, "429 within the quota").to.equal(429);

    const statuses = new Set(exchanges.map((e) => e.status));
    for (const status of [200, 201, 204, 400, 401, 403, 404, 409, 422, 429, 503]) expect(statuses, `a ${status} in the sample`).to.include(status);
    const operations = new Set(exchanges.map((e) => e.name.replace(/ -> \d+$/, "")));
    expect(operations.size).to.be.at.least(30);
    expect(exchanges.filter((e) => e.violations).map((e) => `${e.name}: ${e.violations}`)).to.deep.equal([]);
  });

  it("passes the service's 413 and 415 answers, replayed to a valid request, with no violation", async () => {
    // The live key: the sample above used up the sandbox key's quota.
    const tooLarge = await svc.request("POST", "/v1/users", {
      key: svc.liveKey,
      rawBody: `{"phone": "${uniquePhone()}"${" ".repeat(70 * 1024)}}`,
    });
    const notJson = await svc.request("POST", "/v1/users", {
      key: svc.liveKey,
      rawBody: JSON.stringify({ phone: uniquePhone() }),
      headers: { "content-type": "text/plain" },
    });
    expect([tooLarge.status, notJson.status]).to.deep.equal([413, 415]);
    replays.set("413", tooLarge);
    replays.set("415", notJson);
    for (const status of [413, 415]) {
      const answer = await call("POST", "/v1/users", { body: { phone: uniquePhone() }, headers: { "x-svc-replay": String(status) } });
      expect(answer.status, answer.text).to.equal(status);
      expect(answer.body.error.request_id).to.equal(answer.headers.get("x-request-id"));
    }
    expect(exchanges.filter((e) => e.violations).map((e) => `${e.name}: ${e.violations}`)).to.deep.equal([]);
  });

  it("does validate responses: an answer whose User misstates its phone is a violation", async () => {
    // A real 201 with its User's phone turned into a number (the document says a string), replayed through Prism.
    const created = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
    expect(created.status, created.text).to.equal(201);
    replays.set("misstated", { ...created, text: JSON.stringify({ ...created.body, phone: 15551234567 }) });
    const response = await fetch(`${prism.url}/v1/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${svc.liveKey}`, "content-type": "application/json", "x-svc-replay": "misstated" },
      body: JSON.stringify({ phone: uniquePhone() }),
    });
    const text = await response.text();
    expect(violationsOf({ status: response.status, headers: response.headers, body: undefined, text }), text).to.include("phone");
  });
});
