// One Idempotency-Key space for every door: the same key with the same request over REST, Connect JSON, Connect
// binary and gRPC makes one object and answers its id each time (the first answer replayed with its request id);
// the same key with another request is 422 idempotency_key_reuse on REST and InvalidArgument with that reason on
// every RPC protocol. Five creations: a user, a withdrawal, a sandbox deposit, a KYC session, a webhook endpoint
// (the money ones in REST dollars and in RPC cents: one request).
import type { DescService } from "@bufbuild/protobuf";
import { Code, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { KycSessionsService } from "../../gen/svc/v1/identity_pb.ts";
import { SandboxTransactionsService, TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { WebhookEndpointsService } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { approvedUser, fund } from "../money/support.ts";
import { expectError, rpcErrorOf } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

type Door = "rest" | "connect-json" | "connect-binary" | "grpc";
const RPC_DOORS = ["connect-json", "connect-binary", "grpc"] as const;

/** One creation as each door sends it: the REST route and body, and the same request as a message. */
interface Creation {
  label: string;
  rest: { path: string; body: Record<string, unknown> };
  /** Calls the RPC method with `init` and the call options; answers the created object's id. */
  rpc: (transport: Transport, options: { headers: Record<string, string> }) => Promise<string>;
  /** The same route and method with another request (the key's reuse). */
  changed: { body: Record<string, unknown>; rpc: (transport: Transport, options: { headers: Record<string, string> }) => Promise<string> };
  /** How many objects of this creation exist now. */
  count: () => Promise<number>;
}

function rpcCall<S extends DescService>(
  service: S,
  invoke: (client: Client<S>, options: { headers: Record<string, string> }) => Promise<unknown>,
  idOf: (response: any) => string,
): (transport: Transport, options: { headers: Record<string, string> }) => Promise<string> {
  return async (transport, options) => idOf(await invoke(createClient(service, transport), options));
}

describe("one Idempotency-Key space for REST, Connect JSON, Connect binary and gRPC", function () {
  this.timeout(60_000);
  let svc: TestService;
  let transports: Record<(typeof RPC_DOORS)[number], Transport>;

  before(async () => {
    svc = await startTestService();
    const auth = { authorization: `Bearer ${svc.sandboxKey}` };
    const withAuth = (next: any) => (request: any) => {
      for (const [name, value] of Object.entries(auth)) request.header.set(name, value);
      return next(request);
    };
    transports = {
      "connect-json": createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors: [withAuth] }),
      "connect-binary": createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", useBinaryFormat: true, interceptors: [withAuth] }),
      grpc: createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, interceptors: [withAuth] }),
    };
  });
  after(async () => {
    await svc.stop();
  });

  async function creations(): Promise<Creation[]> {
    const db = svc.database.db;
    const phone = uniquePhone();
    const otherPhone = uniquePhone();
    const payer = await approvedUser(svc);
    await fund(svc, payer, 100);
    const depositor = await approvedUser(svc);
    const applicant = (await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } })).body.id as string;
    const url = `https://hooks.example.com/one-key-${Date.now()}`;
    const transactionsOf = (userId: string, type: string) => () => db.collection("transactions").countDocuments({ user_id: userId, type });
    return [
      {
        label: "a user creation",
        rest: { path: "/v1/users", body: { phone } },
        rpc: rpcCall(
          UsersService,
          (c, o) => c.createUser({ phone }, o),
          (r) => r.user.id,
        ),
        changed: {
          body: { phone: otherPhone },
          rpc: rpcCall(
            UsersService,
            (c, o) => c.createUser({ phone: otherPhone }, o),
            (r) => r.user.id,
          ),
        },
        count: () => db.collection("users").countDocuments({ phone }),
      },
      {
        label: "a withdrawal",
        rest: { path: `/v1/users/${payer}/withdrawals`, body: { amount_usd: 7 } },
        rpc: rpcCall(
          TransactionsService,
          (c, o) => c.createWithdrawal({ userId: payer, amountCents: 700n }, o),
          (r) => r.transaction.id,
        ),
        changed: {
          body: { amount_usd: 8 },
          rpc: rpcCall(
            TransactionsService,
            (c, o) => c.createWithdrawal({ userId: payer, amountCents: 800n }, o),
            (r) => r.transaction.id,
          ),
        },
        count: transactionsOf(payer, "withdrawal"),
      },
      {
        label: "a sandbox deposit",
        rest: { path: `/v1/sandbox/users/${depositor}/deposits`, body: { amount_usd: 5 } },
        rpc: rpcCall(
          SandboxTransactionsService,
          (c, o) => c.createSandboxDeposit({ userId: depositor, amountCents: 500n }, o),
          (r) => r.transaction.id,
        ),
        changed: {
          body: { amount_usd: 6 },
          rpc: rpcCall(
            SandboxTransactionsService,
            (c, o) => c.createSandboxDeposit({ userId: depositor, amountCents: 600n }, o),
            (r) => r.transaction.id,
          ),
        },
        count: transactionsOf(depositor, "deposit"),
      },
      {
        label: "a KYC session",
        rest: { path: `/v1/users/${applicant}/kyc-sessions`, body: {} },
        rpc: rpcCall(
          KycSessionsService,
          (c, o) => c.createKycSession({ userId: applicant }, o),
          (r) => r.kycSession.id,
        ),
        changed: {
          body: { return_url: "https://example.com/done" },
          rpc: rpcCall(
            KycSessionsService,
            (c, o) => c.createKycSession({ userId: applicant, returnUrl: "https://example.com/done" }, o),
            (r) => r.kycSession.id,
          ),
        },
        count: async () => (await svc.request("GET", `/v1/users/${applicant}/kyc-sessions?limit=100`)).body.data.length,
      },
      {
        label: "a webhook endpoint creation",
        rest: { path: "/v1/webhook-endpoints", body: { url } },
        rpc: rpcCall(
          WebhookEndpointsService,
          (c, o) => c.createWebhookEndpoint({ url }, o),
          (r) => r.webhookEndpoint.id,
        ),
        changed: {
          body: { url: `${url}/other` },
          rpc: rpcCall(
            WebhookEndpointsService,
            (c, o) => c.createWebhookEndpoint({ url: `${url}/other` }, o),
            (r) => r.webhookEndpoint.id,
          ),
        },
        count: () => db.collection("webhook_endpoints").countDocuments({ url }),
      },
    ];
  }

  it("makes one object per key through every door, each answer the same id; another request is idempotency_key_reuse on each", async () => {
    for (const creation of await creations()) {
      const key = `one-key-${creation.label.replaceAll(" ", "-")}-${Math.random().toString(36).slice(2)}`;
      const before = await creation.count();
      const headers = { "idempotency-key": key };
      const answers: Record<Door, string> = {} as never;
      const first = await svc.request("POST", creation.rest.path, { body: creation.rest.body, headers });
      expect(first.status, `${creation.label} over REST: ${JSON.stringify(first.body)}`).to.be.oneOf([200, 201]);
      answers.rest = first.body.id;
      for (const door of RPC_DOORS) {
        answers[door] = await creation.rpc(transports[door], { headers });
      }
      // Back on REST after the RPC doors: still the first answer, replayed with its request id.
      const again = await svc.request("POST", creation.rest.path, { body: creation.rest.body, headers });
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      expect(again.headers.get("x-request-id")).to.equal(first.headers.get("x-request-id"));
      expect(again.body).to.deep.equal(first.body);
      expect(Object.values(answers), creation.label).to.deep.equal(Array(4).fill(first.body.id));
      expect(await creation.count(), creation.label).to.equal(before + 1);

      const reused = await svc.request("POST", creation.rest.path, { body: creation.changed.body, headers });
      expectError(reused, 422, "idempotency_error", "idempotency_key_reuse");
      for (const door of RPC_DOORS) {
        const refusal = await rpcErrorOf(creation.changed.rpc(transports[door], { headers }));
        expect(refusal, `${creation.label} over ${door}`).to.deep.include({ code: Code.InvalidArgument, reason: "idempotency_key_reuse" });
      }
      expect(await creation.count(), creation.label).to.equal(before + 1);
    }
  });

  it("replays a first RPC answer over REST with the REST presentation and the call's request id", async () => {
    const phone = uniquePhone();
    const key = `one-key-rpc-first-${Math.random().toString(36).slice(2)}`;
    const client = createClient(UsersService, transports.grpc);
    let requestId: string | null = null;
    const { user } = await client.createUser(
      { phone },
      { headers: { "idempotency-key": key }, onHeader: (h) => (requestId = h.get("x-request-id")) },
    );
    const replayed = await svc.request("POST", "/v1/users", { body: { phone }, headers: { "idempotency-key": key } });
    expect(replayed.status).to.equal(201);
    expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
    expect(replayed.headers.get("x-request-id")).to.equal(requestId);
    expect(replayed.body).to.deep.include({ id: user!.id, object: "user", phone });
  });
});
