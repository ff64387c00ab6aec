// Numbers given as strings in JSON messages, on every door that carries them: Connect JSON over HTTP/1.1 on PORT
// and over HTTP/2 on GRPC_PORT, gRPC with the JSON codec on GRPC_PORT, gRPC-Web with the JSON codec on both ports.
// The proto3 JSON mapping lets a number come as a string; only a decimal literal is read ("16", "1.5", "1e2"), and
// "0x10", "0b11", "0o7", " 5" or "5 " (which Number() would read) are refused with InvalidArgument and an ErrorInfo
// of reason validation_error naming the field, before anything is created. Read on the wire, without connect-es.
// REST takes no string for a number at all, and Connect GET carries no method (none is free of side effects).
import http2 from "node:http2";
import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack, MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { StatusSchema } from "../../gen/google/rpc/status_pb.ts";
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { PUBLIC_API } from "../../src/api/public-api.ts";
import { approvedUser, fund } from "../money/support.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

interface Exchange {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  trailers: Record<string, string>;
}

type Outcome = { ok: true; message: any } | { ok: false; code: string; reason: string; param: string | undefined };

type Protocol = "connect" | "grpc" | "grpc-web";

interface Door {
  name: string;
  protocol: Protocol;
  /** "http": PORT (HTTP/1.1); "grpc": GRPC_PORT (HTTP/2 cleartext). */
  port: "http" | "grpc";
}

const DOORS: Door[] = [
  { name: "Connect JSON over HTTP/1.1 on PORT", protocol: "connect", port: "http" },
  { name: "Connect JSON over HTTP/2 on GRPC_PORT", protocol: "connect", port: "grpc" },
  { name: "gRPC with the JSON codec on GRPC_PORT", protocol: "grpc", port: "grpc" },
  { name: "gRPC-Web with the JSON codec over HTTP/1.1 on PORT", protocol: "grpc-web", port: "http" },
  { name: "gRPC-Web with the JSON codec over HTTP/2 on GRPC_PORT", protocol: "grpc-web", port: "grpc" },
];

const flat = (headers: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(",") : String(value)]));

async function http1(baseUrl: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Exchange> {
  const response = await fetch(baseUrl + path, { method: "POST", headers, body });
  return {
    status: response.status,
    headers: flat(Object.fromEntries(response.headers)),
    body: Buffer.from(await response.arrayBuffer()),
    trailers: {},
  };
}

async function http2Exchange(address: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Exchange> {
  const client = http2.connect(`http://${address}`);
  try {
    const stream = client.request({ ":method": "POST", ":path": path, ...headers });
    const answer = new Promise<Exchange>((resolve, reject) => {
      let head: Record<string, unknown> = {};
      let trailers: Record<string, unknown> = {};
      const chunks: Buffer[] = [];
      stream.on("response", (h) => (head = h));
      stream.on("trailers", (t) => (trailers = t));
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () =>
        resolve({ status: Number(head[":status"]), headers: flat(head), body: Buffer.concat(chunks), trailers: flat(trailers) }),
      );
      stream.on("error", reject);
    });
    stream.end(body);
    return await answer;
  } finally {
    client.close();
  }
}

function envelope(json: string): Buffer {
  const payload = Buffer.from(json);
  const frame = Buffer.alloc(5 + payload.length);
  frame.writeUInt32BE(payload.length, 1);
  payload.copy(frame, 5);
  return frame;
}

function frames(body: Buffer): { flags: number; data: Buffer }[] {
  const out: { flags: number; data: Buffer }[] = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const length = body.readUInt32BE(at + 1);
    out.push({ flags: body[at]!, data: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}

/** The ErrorInfo of a gRPC or gRPC-Web status, from grpc-status-details-bin. */
function grpcOutcome(status: string, detailsBin: string | undefined): Outcome {
  const details = detailsBin ? fromBinary(StatusSchema, Buffer.from(detailsBin, "base64")).details : [];
  const info = details.map((any) => anyUnpack(any, ErrorInfoSchema)).find((d) => d !== undefined);
  return { ok: false, code: codeToString(Number(status)), reason: info?.reason ?? "", param: info?.metadata.param };
}

async function call(svc: TestService, door: Door, path: string, json: string): Promise<Outcome> {
  const headers: Record<string, string> = { authorization: `Bearer ${svc.sandboxKey}` };
  let body: Buffer = Buffer.from(json);
  if (door.protocol === "connect") headers["content-type"] = "application/json";
  else {
    headers["content-type"] = `application/${door.protocol}+json`;
    if (door.protocol === "grpc") headers.te = "trailers";
    body = envelope(json);
  }
  const exchange = door.port === "http" ? await http1(svc.baseUrl, path, headers, body) : await http2Exchange(svc.grpcAddress, path, headers, body);
  if (door.protocol === "connect") {
    const answer = JSON.parse(exchange.body.toString("utf8"));
    if (exchange.status === 200) return { ok: true, message: answer };
    const detail = (answer.details ?? [])[0];
    const info = detail ? fromBinary(ErrorInfoSchema, Buffer.from(detail.value, "base64")) : undefined;
    return { ok: false, code: answer.code, reason: info?.reason ?? "", param: info?.metadata.param };
  }
  expect(exchange.status, `${door.name}: HTTP status`).to.equal(200);
  const received = frames(exchange.body);
  // gRPC: the status in the trailers (or the headers of a trailers-only answer); gRPC-Web: in a trailer frame.
  let trailers = { ...exchange.headers, ...exchange.trailers };
  const trailerFrame = received.find((f) => (f.flags & 0x80) !== 0);
  if (trailerFrame) {
    const lines = trailerFrame.data.toString("utf8").split("\r\n").filter(Boolean);
    trailers = {
      ...trailers,
      ...Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()])),
    };
  }
  const status = trailers["grpc-status"];
  expect(status, `${door.name}: grpc-status`).to.be.a("string");
  if (status !== "0") return grpcOutcome(status!, trailers["grpc-status-details-bin"]);
  const message = received.find((f) => (f.flags & 0x80) === 0);
  return { ok: true, message: JSON.parse(message!.data.toString("utf8")) };
}

const DEPOSIT = "/svc.v1.SandboxTransactionsService/CreateSandboxDeposit";
const WITHDRAWAL = "/svc.v1.TransactionsService/CreateWithdrawal";
const LIST = "/svc.v1.TransactionsService/ListUserTransactions";

describe("numbers given as strings over Connect, gRPC and gRPC-Web JSON: decimal literals only", function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: string;
  const transactionsOf = () => svc.database.db.collection("transactions").countDocuments({ user_id: user });
  const refusal = (param: string): Outcome => ({ ok: false, code: "invalid_argument", reason: "validation_error", param });

  before(async () => {
    svc = await startTestService();
    user = await approvedUser(svc);
    await fund(svc, user, 1000);
  });
  after(async () => {
    await svc.stop();
  });

  for (const door of DOORS) {
    describe(door.name, () => {
      it('refuses "0x10", "0b11", "0o7", " 5" and "5 " for amount_usd of a sandbox deposit and a withdrawal, creating nothing', async () => {
        const before = await transactionsOf();
        for (const text of ["0x10", "0b11", "0o7", " 5", "5 "]) {
          const amount = JSON.stringify(text);
          const deposit = await call(svc, door, DEPOSIT, `{"user_id": "${user}", "amount_usd": ${amount}, "complete_after_seconds": 3600}`);
          expect(deposit, `deposit of ${amount}`).to.deep.equal(refusal("amount_usd"));
          const withdrawal = await call(svc, door, WITHDRAWAL, `{"user_id": "${user}", "amount_usd": ${amount}}`);
          expect(withdrawal, `withdrawal of ${amount}`).to.deep.equal(refusal("amount_usd"));
          // The camelCase spelling protobuf JSON also accepts is named by the field's snake_case name.
          const camel = await call(svc, door, WITHDRAWAL, `{"userId": "${user}", "amountUsd": ${amount}}`);
          expect(camel, `withdrawal of ${amount} as amountUsd`).to.deep.equal(refusal("amount_usd"));
        }
        // Integer fields: the same rule, and a whole value.
        for (const text of ["0x10", "1.5", " 5"]) {
          const deposit = await call(
            svc,
            door,
            DEPOSIT,
            `{"user_id": "${user}", "amount_usd": 5, "complete_after_seconds": ${JSON.stringify(text)}}`,
          );
          expect(deposit, `complete_after_seconds ${text}`).to.deep.equal(refusal("complete_after_seconds"));
        }
        expect(await call(svc, door, LIST, `{"user_id": "${user}", "limit": "0o7"}`)).to.deep.equal(refusal("limit"));
        expect(await transactionsOf()).to.equal(before);
      });

      it('accepts "16", "1.5" and "1e2" as 16, 1.50 and 100 dollars, for deposits and withdrawals', async () => {
        for (const [text, cents] of [
          ["16", "1600"],
          ["1.5", "150"],
          ["1e2", "10000"],
        ] as const) {
          const deposit = await call(svc, door, DEPOSIT, `{"user_id": "${user}", "amount_usd": "${text}", "complete_after_seconds": "3.6e3"}`);
          expect(deposit.ok && deposit.message.transaction.amount_cents, `deposit of "${text}": ${JSON.stringify(deposit)}`).to.equal(cents);
          const withdrawal = await call(svc, door, WITHDRAWAL, `{"user_id": "${user}", "amount_usd": "${text}"}`);
          expect(withdrawal.ok && withdrawal.message.transaction.amount_cents, `withdrawal of "${text}": ${JSON.stringify(withdrawal)}`).to.equal(
            cents,
          );
        }
        const listed = await call(svc, door, LIST, `{"user_id": "${user}", "limit": "2"}`);
        expect(listed.ok && listed.message.data.length).to.equal(2);
      });
    });
  }

  it('REST: a JSON string is never a number ("0x10", "0b11", "0o7", "5", " 5" -> 422 naming the field), creating nothing', async () => {
    const before = await transactionsOf();
    for (const text of ["0x10", "0b11", "0o7", "5", " 5", "16", "1e2"]) {
      const cases: [string, Record<string, unknown>, string][] = [
        [`/v1/sandbox/users/${user}/deposits`, { amount_usd: text }, "amount_usd"],
        [`/v1/sandbox/users/${user}/deposits`, { amount_usd: 5, fee_usd: text }, "fee_usd"],
        [`/v1/sandbox/users/${user}/deposits`, { amount_usd: 5, fiat_currency: "EUR", fiat_amount: text }, "fiat_amount"],
        [`/v1/sandbox/users/${user}/deposits`, { amount_usd: 5, complete_after_seconds: text }, "complete_after_seconds"],
        [`/v1/users/${user}/withdrawals`, { amount_usd: text }, "amount_usd"],
      ];
      for (const [path, body, param] of cases) {
        const res = await svc.request("POST", path, { body });
        expect(res.status, `${path} ${JSON.stringify(body)}: ${res.text}`).to.equal(422);
        expect(res.body.error).to.include({ code: "validation_error", param });
      }
    }
    expect(await transactionsOf()).to.equal(before);
  });

  it("Connect GET is no door: no method is free of side effects, and a GET of a deposit is refused without creating it", async () => {
    const methods = [...PUBLIC_API.map((m) => m.method), ...AdminService.methods];
    expect(methods.filter((m) => m.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS).map((m) => m.name)).to.deep.equal([]);
    const before = await transactionsOf();
    const message = encodeURIComponent(JSON.stringify({ user_id: user, amount_usd: "0x10" }));
    const get = await fetch(`${svc.baseUrl}${DEPOSIT}?connect=v1&encoding=json&message=${message}`, {
      headers: { authorization: `Bearer ${svc.sandboxKey}` },
    });
    expect(get.status).to.equal(405);
    expect(await transactionsOf()).to.equal(before);
  });
});
