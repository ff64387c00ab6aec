// Every row of docs/contract.md's Profile rules table, through the REST API: a valid and an invalid value each,
// on creation and on update, with the exact 422 param.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

interface Row {
  field: string;
  valid: unknown[];
  invalid: { value: unknown; param?: string }[];
}

const today = new Date();
const isoDay = (d: Date) => d.toISOString().slice(0, 10);
const tomorrow = new Date(today.getTime() + 86_400_000);

const ROWS: Row[] = [
  {
    field: "email",
    valid: ["ann@example.com", `${"a".repeat(242)}@example.com`],
    invalid: [{ value: `${"a".repeat(243)}@example.com` }, { value: "not-an-email" }, { value: 42 }],
  },
  { field: "first_name", valid: ["A", "é".repeat(100)], invalid: [{ value: "" }, { value: "x".repeat(101) }, { value: true }] },
  { field: "last_name", valid: ["B", "z".repeat(100)], invalid: [{ value: "" }, { value: "x".repeat(101) }] },
  {
    field: "birth_date",
    valid: ["1990-01-31", "2000-02-29"],
    invalid: [{ value: "1990-1-31" }, { value: "2001-02-29" }, { value: isoDay(tomorrow) }, { value: "31/01/1990" }],
  },
  { field: "country", valid: ["FR", "us"], invalid: [{ value: "FRA" }, { value: "XX" }, { value: "1A" }] },
  { field: "referral_code", valid: ["abc", "A_b-9".padEnd(32, "x")], invalid: [{ value: "ab" }, { value: "x".repeat(33) }, { value: "has space" }] },
  {
    field: "terms_acceptance",
    valid: [
      { version: "v1", accepted_at: "2026-01-01T00:00:00Z" },
      { version: "x".repeat(64), accepted_at: "2025-06-01T12:00:00+02:00" },
    ],
    invalid: [
      { value: { version: "", accepted_at: "2026-01-01T00:00:00Z" }, param: "terms_acceptance.version" },
      { value: { version: "x".repeat(65), accepted_at: "2026-01-01T00:00:00Z" }, param: "terms_acceptance.version" },
      { value: { accepted_at: "2026-01-01T00:00:00Z" }, param: "terms_acceptance.version" },
      { value: { version: "v1" }, param: "terms_acceptance.accepted_at" },
      { value: { version: "v1", accepted_at: "yesterday" }, param: "terms_acceptance.accepted_at" },
      { value: { version: "v1", accepted_at: new Date(Date.now() + 3_600_000).toISOString() }, param: "terms_acceptance.accepted_at" },
      { value: { version: "v1", accepted_at: "2026-01-01T00:00:00Z", extra: 1 }, param: "terms_acceptance.extra" },
      { value: "v1", param: "terms_acceptance" },
    ],
  },
  { field: "tagname", valid: ["abc", "A.b-c_9".padEnd(30, "x")], invalid: [{ value: "ab" }, { value: "x".repeat(31) }, { value: "bad tag" }] },
];

describe("users: input constraints", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  describe("phone and external_id", () => {
    it("accepts an E.164 phone and refuses others with param phone", async () => {
      expect((await svc.request("POST", "/v1/users", { body: { phone: "+4915112345678" } })).status).to.equal(201);
      for (const phone of ["4915112345678", "+0123456789", "+12345", "+1234567890123456", "", "+1 415 555 0100"]) {
        expectError(await svc.request("POST", "/v1/users", { body: { phone } }), 422, "invalid_request_error", "validation_error", "phone");
      }
      expectError(await svc.request("POST", "/v1/users", { body: {} }), 422, "invalid_request_error", "validation_error", "phone");
      expectError(
        await svc.request("POST", "/v1/users", { body: { phone: 14155550100 } }),
        422,
        "invalid_request_error",
        "validation_error",
        "phone",
      );
    });

    it("accepts external_id of 1 and 128 characters and refuses 0 and 129", async () => {
      for (const externalId of ["x", "y".repeat(128)]) {
        const res = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), external_id: externalId } });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.external_id).to.equal(externalId);
      }
      for (const externalId of ["", "z".repeat(129)]) {
        const res = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), external_id: externalId } });
        expectError(res, 422, "invalid_request_error", "validation_error", "external_id");
      }
    });

    it("refuses an unknown field naming it in param", async () => {
      const res = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), nickname: "x" } });
      expectError(res, 422, "invalid_request_error", "validation_error", "nickname");
    });
  });

  for (const row of ROWS) {
    describe(row.field, () => {
      for (const value of row.valid) {
        it(`accepts ${JSON.stringify(value).slice(0, 40)} on create and on update`, async () => {
          const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), [row.field]: value } });
          expect(created.status, created.text).to.equal(201);
          const other = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
          // tagnames are unique: give the update its own variant
          const updateValue = row.field === "tagname" ? `${String(value).slice(0, 28)}u2` : value;
          const updated = await svc.request("PATCH", `/v1/users/${other.body.id}`, { body: { [row.field]: updateValue } });
          expect(updated.status, updated.text).to.equal(200);
          expect(updated.body.profile[row.field]).not.to.equal(null);
        });
      }
      for (const { value, param } of row.invalid) {
        it(`refuses ${JSON.stringify(value).slice(0, 40)} on create and on update with param ${param ?? row.field}`, async () => {
          const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), [row.field]: value } });
          expectError(created, 422, "invalid_request_error", "validation_error", param ?? row.field);
          const other = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
          const updated = await svc.request("PATCH", `/v1/users/${other.body.id}`, { body: { [row.field]: value } });
          expectError(updated, 422, "invalid_request_error", "validation_error", param ?? row.field);
        });
      }
    });
  }

  it("normalises: email lowercased, country uppercased, tagname kept as given", async () => {
    const created = await svc.request("POST", "/v1/users", {
      body: { phone: uniquePhone(), email: "Mixed.Case@Example.COM", country: "de", tagname: "MiXeD_tag" },
    });
    const read = await svc.request("GET", `/v1/users/${created.body.id}`);
    expect(read.body.profile).to.include({ email: "mixed.case@example.com", country: "DE", tagname: "MiXeD_tag" });
  });

  it("refuses changing phone or external_id on update", async () => {
    const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    for (const field of ["phone", "external_id"]) {
      const res = await svc.request("PATCH", `/v1/users/${created.body.id}`, { body: { [field]: "+14155550199" } });
      expectError(res, 422, "invalid_request_error", "validation_error", field);
    }
  });
});
