// The OpenAPI document as validators, generators and documentation tools read it: every operation described,
// an example on every object schema and operation, each example valid against its own schema, and no one-item
// oneOf/anyOf/allOf wrappers (Redocly and generators read them as needless unions).
import { expect } from "chai";
import { PUBLIC_API } from "../../src/api/public-api.ts";
import { centsOf } from "../../src/domain/money.ts";
import { EMAIL_PATTERN } from "../../src/domain/profile-rules.ts";
import { buildOpenApiDocument } from "../../src/rest/openapi/document.ts";
import { EMAIL_SCHEMA_PATTERN } from "../../src/representations/users.ts";
import { documentSchemas } from "../support/document-schemas.ts";

type Json = { [key: string]: any };

const document: Json = buildOpenApiDocument(PUBLIC_API);
const { ajv, pointer, validator } = documentSchemas(document, "urn:svc:openapi-document");

/** Why `value` is not valid against the schema at `schemaPointer`; empty when it is. */
function errorsOf(schemaPointer: string, value: unknown): string {
  const validate = validator(schemaPointer);
  return validate(value) ? "" : ajv.errorsText(validate.errors);
}

const operations = Object.entries<Json>(document.paths).flatMap(([path, methods]) =>
  Object.entries<Json>(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, operation })),
);

describe("OpenAPI document: descriptions, examples, no one-item wrappers", () => {
  it("gives every operation a summary and a description", () => {
    const missing = operations.filter(({ operation }) => !operation.summary?.trim() || !operation.description?.trim()).map(({ name }) => name);
    expect(missing).to.deep.equal([]);
    expect(operations.length).to.be.greaterThan(30);
  });

  it("has no oneOf, anyOf or allOf with a single item", () => {
    const found: string[] = [];
    const walk = (value: unknown, at: string) => {
      if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${at}/${i}`));
      else if (value && typeof value === "object") {
        for (const [key, child] of Object.entries(value)) {
          if (["oneOf", "anyOf", "allOf"].includes(key) && Array.isArray(child) && child.length === 1) found.push(`${at}/${key}`);
          walk(child, `${at}/${key}`);
        }
      }
    };
    walk(document, "#");
    expect(found).to.deep.equal([]);
  });

  it("gives every named object schema an example, each valid against it", () => {
    const schemas = Object.entries<Json>(document.components.schemas);
    const withoutExample = schemas.filter(([, schema]) => schema.type === "object" && !(schema.examples?.length > 0)).map(([name]) => name);
    expect(withoutExample).to.deep.equal([]);
    const invalid = schemas.flatMap(([name, schema]) =>
      (schema.examples ?? []).map((example: unknown, i: number) => [
        `${name} example ${i}`,
        errorsOf(pointer("components", "schemas", name), example),
      ]),
    );
    expect(invalid.filter(([, errors]) => errors)).to.deep.equal([]);
    expect(invalid.length).to.be.at.least(schemas.length - 1);
  });

  it("gives every request body and success answer an example valid against its schema", () => {
    const problems: string[] = [];
    let checked = 0;
    for (const { name, path, method, operation } of operations) {
      const media: [string, Json | undefined][] = [["request body", operation.requestBody?.content?.["application/json"]]];
      const [status, success] = Object.entries<Json>(operation.responses).find(([code]) => code.startsWith("2"))!;
      media.push([`${status} answer`, success.content?.["application/json"]]);
      for (const [what, content] of media) {
        if (!content) continue;
        checked++;
        if (content.example === undefined) {
          problems.push(`${name}: the ${what} has no example`);
          continue;
        }
        const at = what === "request body" ? ["requestBody"] : ["responses", status];
        const errors = errorsOf(pointer("paths", path, method, ...at, "content", "application/json", "schema"), content.example);
        if (errors) problems.push(`${name}: the ${what} example: ${errors}`);
      }
    }
    expect(problems).to.deep.equal([]);
    expect(checked).to.be.greaterThan(operations.length);
  });

  it("keeps parameter examples valid against their schemas", () => {
    const parameters = Object.entries<Json>(document.components.parameters).filter(([, parameter]) => parameter.example !== undefined);
    expect(parameters.length).to.be.greaterThan(0);
    for (const [name, parameter] of parameters) {
      expect(errorsOf(pointer("components", "parameters", name, "schema"), parameter.example), name).to.equal("");
    }
  });

  it("shows the state an operation ends in, where its own example says so", () => {
    const example = (path: string, method: string) => {
      const responses = document.paths[path][method].responses;
      return responses[Object.keys(responses).find((code) => code.startsWith("2"))!].content["application/json"].example;
    };
    expect(example("/v1/kyc-sessions/{id}/cancel", "post").status).to.equal("canceled");
    expect(example("/v1/sandbox/kyc-sessions/{id}/reject", "post").last_error).to.include({ code: "verification_rejected" });
    expect(example("/v1/users/{id}", "get")).to.have.property("profile").that.is.an("object");
  });
});

describe("OpenAPI request and money schemas: the server's rules", () => {
  const accepts = (schema: string, value: unknown) => ajv.validate({ $ref: pointer("components", "schemas", schema) }, value);

  it("states the email rule as the server applies it, also to validators without Unicode mode (Spectral)", () => {
    const samples = [
      "ada@example.com",
      "pCc{}@x",
      "user@localhost",
      "a b@example.com",
      "a@b@c",
      "@example.com",
      "ada@",
      "a\u0000b@x",
      "a\u0085@x",
      "a\u009f@x",
      "é@ü.de",
    ];
    const server = samples.map((s) => EMAIL_PATTERN.test(s));
    expect(samples.map((s) => new RegExp(EMAIL_SCHEMA_PATTERN, "u").test(s))).to.deep.equal(server);
    expect(samples.map((s) => new RegExp(EMAIL_SCHEMA_PATTERN).test(s))).to.deep.equal(server);
    expect(samples.map((s) => accepts("UpdateUserRequest", { email: s }))).to.deep.equal(server);
  });

  it("accepts every amount of at most 2 decimals the server answers (no floating-point multipleOf)", () => {
    const transaction = (document.components.schemas.Transaction.examples as Json[])[0]!;
    for (const amount of [0.07, 19.99, 0.29, 1.15, 999_999.99]) {
      expect(accepts("Transaction", { ...transaction, amount_usd: amount, fee_usd: amount }), String(amount)).to.equal(true);
      expect(accepts("WalletBalance", { available_usd: amount, pending_in_usd: amount, pending_out_usd: amount }), String(amount)).to.equal(true);
      expect(accepts("CreateWithdrawalRequest", { amount_usd: amount }), String(amount)).to.equal(true);
    }
  });

  it("bounds input amounts as the server does: 0.01 to 1,000,000", () => {
    const accepted = (amount: number) => {
      try {
        centsOf("amount_usd", amount);
        return true;
      } catch {
        return false;
      }
    };
    for (const amount of [0, 0.005, 0.01, 1_000_000, 1_000_000.01]) {
      expect(accepts("CreateWithdrawalRequest", { amount_usd: amount }), String(amount)).to.equal(accepted(amount));
      expect(accepts("CreateSandboxDepositRequest", { amount_usd: amount }), String(amount)).to.equal(accepted(amount));
    }
  });
});
