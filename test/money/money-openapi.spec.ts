// The OpenAPI examples of money: every money schema carries examples and every money operation an example of its
// answer (and of its body when it takes one), each valid against its schema; the request examples are bodies the
// server takes.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "chai";
import { PUBLIC_API } from "../../src/api/public-api.ts";
import { REQUEST_EXAMPLES } from "../../src/representations/transaction-requests.ts";
import { buildOpenApiDocument } from "../../src/rest/openapi/document.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser, fund } from "./support.ts";

const MONEY_SCHEMAS = [
  "Transaction",
  "TransactionList",
  "WalletBalance",
  "CreateWithdrawalRequest",
  "CreateSandboxDepositRequest",
  "FailSandboxTransactionRequest",
];
const MONEY_OPERATIONS = [
  ["get", "/v1/users/{user_id}/transactions"],
  ["get", "/v1/transactions/{id}"],
  ["post", "/v1/users/{user_id}/withdrawals"],
  ["post", "/v1/transactions/{id}/cancel"],
  ["post", "/v1/sandbox/users/{user_id}/deposits"],
  ["post", "/v1/sandbox/transactions/{id}/complete"],
  ["post", "/v1/sandbox/transactions/{id}/fail"],
] as const;

describe("money: OpenAPI examples", () => {
  const document = buildOpenApiDocument(PUBLIC_API) as any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...document, $id: "urn:svc:money-examples" });
  const check = (schema: unknown, value: unknown, what: string) => {
    const valid = ajv.validate(schema as object, value);
    expect(valid, `${what}: ${ajv.errorsText(ajv.errors)}`).to.equal(true);
  };
  const component = (name: string) => ({ $ref: `urn:svc:money-examples#/components/schemas/${name}` });
  const resolved = (schema: { $ref?: string }) => component(schema.$ref!.split("/").pop()!);

  it("gives every money schema examples that validate against it", () => {
    for (const name of MONEY_SCHEMAS) {
      const examples = document.components.schemas[name].examples as unknown[];
      expect(examples, name).to.be.an("array").that.is.not.empty;
      examples.forEach((example, i) => check(component(name), example, `${name} example ${i}`));
    }
    // And they show what the schemas refuse nothing of: a failed withdrawal, a completed deposit, a list.
    const statuses = document.components.schemas.Transaction.examples.map((t: any) => `${t.type}:${t.status}`);
    expect(statuses).to.include.members(["withdrawal:pending", "deposit:completed", "withdrawal:failed"]);
    for (const name of ["TransactionTypeFilter", "TransactionStatusFilter"]) {
      const parameter = document.components.parameters[name];
      check(parameter.schema, parameter.example, name);
    }
  });

  it("gives every money operation an example of its answer, and of its body, each valid against its schema", () => {
    for (const [method, path] of MONEY_OPERATIONS) {
      const operation = document.paths[path][method];
      const success = Object.entries<any>(operation.responses).find(([status]) => status.startsWith("2"))![1];
      const media = success.content["application/json"];
      expect(media.example, `${method} ${path}: a success example`).to.exist;
      check(resolved(media.schema), media.example, `${method} ${path} answer`);
      const body = operation.requestBody?.content["application/json"];
      if (body && body.schema.$ref !== "#/components/schemas/EmptyBody") {
        expect(body.example, `${method} ${path}: a body example`).to.exist;
        check(resolved(body.schema), body.example, `${method} ${path} body`);
      }
    }
    const answered = (method: string, path: string) => {
      const operation = document.paths[path][method];
      return Object.entries<any>(operation.responses).find(([status]) => status.startsWith("2"))![1].content["application/json"].example;
    };
    expect(answered("post", "/v1/users/{user_id}/withdrawals")).to.include({ type: "withdrawal", status: "pending" });
    expect(answered("post", "/v1/transactions/{id}/cancel")).to.include({ status: "canceled" });
    expect(answered("post", "/v1/sandbox/transactions/{id}/fail")).to.include({ status: "failed", failure_code: "simulated_failure" });
  });

  describe("against the server", function () {
    this.timeout(20_000);
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ timings: { jobPollMs: 100 } });
    });
    after(async () => {
      await svc.stop();
    });

    it("takes the request examples and answers in their examples' shape", async () => {
      const user = await approvedUser(svc);
      const deposit = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: REQUEST_EXAMPLES.sandboxDeposit });
      expect(deposit.status, deposit.text).to.equal(201);
      const example = document.paths["/v1/sandbox/users/{user_id}/deposits"].post.responses["201"].content["application/json"].example;
      const { id: _a, user_id: _b, wallet_id: _c, created_at: _d, updated_at: _e, ...shown } = example;
      expect(deposit.body).to.include(shown);
      // Failed at once: the simulator completes a pending sandbox deposit on its own a moment later.
      const failed = await svc.request("POST", `/v1/sandbox/transactions/${deposit.body.id}/fail`, { body: REQUEST_EXAMPLES.sandboxFail });
      expect(failed.status, failed.text).to.equal(200);
      expect(failed.body).to.include({ status: "failed", failure_code: "simulated_failure", failure_message: "Failed by the sandbox simulator." });
      await fund(svc, user, 50);
      const withdrawal = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: REQUEST_EXAMPLES.withdrawal });
      expect(withdrawal.status, withdrawal.text).to.equal(201);
      expect(withdrawal.body).to.include({ status: "pending", amount_usd: 25, description: REQUEST_EXAMPLES.withdrawal.description });
    });
  });
});
