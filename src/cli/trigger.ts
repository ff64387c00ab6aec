// `svc trigger <type>`: makes the sandbox do what emits an event of that type, through the public API with the
// sandbox key (a user, a KYC decision, a deposit, a withdrawal, a test of a webhook endpoint).
import { parseArgs } from "node:util";
import { randomInt } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { KycSessionsService, SandboxService } from "../../gen/svc/v1/identity_pb.ts";
import { SandboxTransactionsService, TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { WebhookEndpointsService } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { type CliCommand, say } from "./command.ts";
import { CliError, CONNECTION_HELP, CONNECTION_OPTIONS, type Connection, connectionOf, describeFailure } from "./connection.ts";

/** What was made, one line each, for the output. */
type Made = string[];

interface Fixture {
  description: string;
  run(connection: Connection, made: Made): Promise<void>;
}

async function newUser(connection: Connection, made: Made): Promise<string> {
  // Random, so a trigger does not meet an earlier trigger's user (phones are unique in a project).
  const phone = `+1415${String(randomInt(2_000_000, 9_999_999))}`;
  const { user } = await connection.client(UsersService).createUser({ phone });
  made.push(`user ${user!.id} (${phone})`);
  return user!.id;
}

async function kycDecision(connection: Connection, made: Made, decision: "approve" | "reject"): Promise<string> {
  const userId = await newUser(connection, made);
  const { kycSession } = await connection.client(KycSessionsService).createKycSession({ userId });
  const sandbox = connection.client(SandboxService);
  if (decision === "approve") await sandbox.approveKycSession({ id: kycSession!.id });
  else await sandbox.rejectKycSession({ id: kycSession!.id, reason: "svc trigger" });
  made.push(`kyc session ${kycSession!.id} (${decision === "approve" ? "approved" : "rejected"})`);
  return userId;
}

/** A KYC-approved user with a deposit: received, and completed unless `complete` is false. */
async function deposit(connection: Connection, made: Made, complete: boolean): Promise<string> {
  const userId = await kycDecision(connection, made, "approve");
  const sandbox = connection.client(SandboxTransactionsService);
  // Completed by the call below, not by the simulator's timer (its longest wait, so it never comes first).
  const { transaction } = await sandbox.createSandboxDeposit({ userId, amountCents: 10_000n, completeAfterSeconds: 3600 });
  made.push(`deposit ${transaction!.id} (100.00 USD)`);
  if (complete) await sandbox.completeSandboxTransaction({ id: transaction!.id });
  return userId;
}

async function withdrawal(connection: Connection, made: Made, outcome: "complete" | "fail"): Promise<void> {
  const userId = await deposit(connection, made, true);
  const { transaction } = await connection.client(TransactionsService).createWithdrawal({ userId, amountCents: 2_500n });
  made.push(`withdrawal ${transaction!.id} (25.00 USD)`);
  const sandbox = connection.client(SandboxTransactionsService);
  if (outcome === "complete") await sandbox.completeSandboxTransaction({ id: transaction!.id });
  else await sandbox.failSandboxTransaction({ id: transaction!.id, failureCode: "svc_trigger" });
}

async function testEndpoint(made: Made, endpoints: Client<typeof WebhookEndpointsService>): Promise<void> {
  const endpoint = (await endpoints.listWebhookEndpoints({ limit: 1 })).data[0];
  if (!endpoint) {
    throw new CliError("webhook.test is sent to a webhook endpoint, and the project has none: create one (POST /v1/webhook-endpoints) first");
  }
  const { webhookTest } = await endpoints.testWebhookEndpoint({ id: endpoint.id });
  made.push(`test of webhook endpoint ${endpoint.id} (event ${webhookTest!.eventId})`);
}

/** Every type the sandbox can be made to emit with an API key; suspensions are the operator's (AdminService). */
export const TRIGGERS: Readonly<Record<string, Fixture>> = {
  "user.created": { description: "creates a user", run: async (c, made) => void (await newUser(c, made)) },
  "kyc.approved": { description: "a user, a KYC session, approved", run: async (c, made) => void (await kycDecision(c, made, "approve")) },
  "kyc.rejected": { description: "a user, a KYC session, rejected", run: async (c, made) => void (await kycDecision(c, made, "reject")) },
  "transaction.received": { description: "an approved user and a sandbox deposit", run: async (c, made) => void (await deposit(c, made, false)) },
  "transaction.completed": { description: "the deposit above, completed", run: async (c, made) => void (await deposit(c, made, true)) },
  "withdrawal.completed": { description: "a funded user's withdrawal, completed", run: (c, made) => withdrawal(c, made, "complete") },
  "withdrawal.failed": { description: "a funded user's withdrawal, failed", run: (c, made) => withdrawal(c, made, "fail") },
  "webhook.test": {
    description: "tests the project's first webhook endpoint",
    run: (c, made) => testEndpoint(made, c.client(WebhookEndpointsService)),
  },
};

export const triggerCommand: CliCommand = {
  name: "trigger",
  summary: "make the sandbox emit an event of a type",
  help: `Usage: svc trigger <event type>

Makes the sandbox do what emits the event (with a sandbox key), and prints what it made. Types:
${Object.entries(TRIGGERS)
  .map(([type, fixture]) => `  ${type.padEnd(22)} ${fixture.description}`)
  .join("\n")}
(user.suspended and user.unsuspended come from the operator's AdminService, not from an API key.)

${CONNECTION_HELP}`,
  async run(args, env) {
    const { values, positionals } = parseArgs({ args, options: CONNECTION_OPTIONS, allowPositionals: true });
    if (values.help) {
      say(this.help);
      return 0;
    }
    const type = positionals[0];
    if (positionals.length !== 1 || type === undefined)
      throw new CliError("give one event type: svc trigger <event type> (svc trigger --help lists them)");
    const fixture = TRIGGERS[type];
    if (!fixture) throw new CliError(`svc trigger cannot make ${JSON.stringify(type)}; it makes ${Object.keys(TRIGGERS).join(", ")}`);
    const connection = connectionOf(values, env);
    const made: Made = [];
    try {
      await fixture.run(connection, made);
    } catch (error) {
      throw new CliError(describeFailure(error, connection));
    }
    for (const line of made) say(`Made ${line}`);
    say(`Trigger succeeded! Check svc listen (or the dashboard's live events) for ${type}.`);
    return 0;
  },
};
