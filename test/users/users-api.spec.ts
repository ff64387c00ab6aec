// POST/GET/PATCH /v1/users, wallets and the signup config: the statuses, codes and field values of docs/contract.md.
import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { SignupModuleSettingSchema } from "../../gen/svc/admin/v1/admin_pb.ts";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const USER_FIELDS = [
  "id",
  "object",
  "phone",
  "external_id",
  "verified",
  "kyc_status",
  "suspended",
  "livemode",
  "wallet_status",
  "created_at",
  "last_login_at",
];
const PROFILE_FIELDS = [
  "object",
  "email",
  "first_name",
  "last_name",
  "birth_date",
  "country",
  "referral_code",
  "terms_acceptance",
  "tagname",
  "updated_at",
];

describe("users API", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  describe("sandbox and live", () => {
    it("sandbox: verified, simulated wallet ready, livemode false, every field present, no profile", async () => {
      const res = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), external_id: "crm-1" } });
      expect(res.status).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal([...USER_FIELDS].sort());
      expect(res.body).to.include({
        object: "user",
        verified: true,
        livemode: false,
        wallet_status: "ready",
        kyc_status: "none",
        suspended: false,
        external_id: "crm-1",
        last_login_at: null,
      });
      expect(res.body.id).to.match(/^[1-9]\d{8}$/);
      expect(res.body.created_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const wallets = await svc.request("GET", `/v1/users/${res.body.id}/wallets`);
      expect(wallets.status).to.equal(200);
      expect(wallets.body).to.include({ object: "list", url: `/v1/users/${res.body.id}/wallets`, has_more: false });
      expect(wallets.body.data).to.have.length(1);
      expect(wallets.body.data[0]).to.include({ object: "wallet", user_id: res.body.id, status: "ready", simulated: true, livemode: false });
    });

    it("live: not verified, livemode true, wallet created right after", async () => {
      const res = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ verified: false, livemode: true, wallet_status: "ready" });
      const wallets = await svc.request("GET", `/v1/users/${res.body.id}/wallets`, { key: svc.liveKey });
      expect(wallets.body.data[0]).to.include({ status: "ready", simulated: false, livemode: true });
    });

    it("live without live wallets for the project: wallet_status none and no wallet", async () => {
      await svc.admin.updateProject({ id: svc.projectId, liveWalletsEnabled: false });
      try {
        const res = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
        expect(res.body.wallet_status).to.equal("none");
        const wallets = await svc.request("GET", `/v1/users/${res.body.id}/wallets`, { key: svc.liveKey });
        expect(wallets.body.data).to.deep.equal([]);
      } finally {
        await svc.admin.updateProject({ id: svc.projectId, liveWalletsEnabled: true });
      }
    });
  });

  describe("retrieval", () => {
    it("answers the user with profile null until a profile field is stored, then every profile field", async () => {
      const bare = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      const read = await svc.request("GET", `/v1/users/${bare.body.id}`);
      expect(read.status).to.equal(200);
      expect(read.body.profile).to.equal(null);
      const withProfile = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), first_name: "Ada" } });
      const full = await svc.request("GET", `/v1/users/${withProfile.body.id}`);
      expect(Object.keys(full.body.profile).sort()).to.deep.equal([...PROFILE_FIELDS].sort());
      expect(full.body.profile).to.include({ object: "profile", first_name: "Ada", email: null, terms_acceptance: null });
    });

    it("answers 404 user_not_found for unknown, malformed and other-environment ids", async () => {
      const sandboxUser = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      for (const id of ["123456789", "abc", "1234567890", "-1"]) {
        expectError(await svc.request("GET", `/v1/users/${id}`), 404, "invalid_request_error", "user_not_found");
      }
      expectError(await svc.request("GET", `/v1/users/${sandboxUser.body.id}`, { key: svc.liveKey }), 404, "invalid_request_error", "user_not_found");
      expectError(
        await svc.request("PATCH", `/v1/users/${sandboxUser.body.id}`, { key: svc.liveKey, body: { first_name: "X" } }),
        404,
        "invalid_request_error",
        "user_not_found",
      );
      expectError(
        await svc.request("GET", `/v1/users/${sandboxUser.body.id}/wallets`, { key: svc.liveKey }),
        404,
        "invalid_request_error",
        "user_not_found",
      );
    });

    it("answers 404 for a user of another project", async () => {
      const { projectId } = await createProject(svc, { organizationId: svc.organizationId });
      const { secret } = await createKey(svc, projectId);
      const mine = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      expectError(await svc.request("GET", `/v1/users/${mine.body.id}`, { key: secret }), 404, "invalid_request_error", "user_not_found");
      // The same phone is free in the other project.
      const theirs = await svc.request("POST", "/v1/users", { key: secret, body: { phone: mine.body.phone } });
      expect(theirs.status).to.equal(201);
    });
  });

  describe("conflicts", () => {
    it("409 user_already_exists for a phone or external_id already in the project and environment, naming which in param and message", async () => {
      const p = uniquePhone();
      await svc.request("POST", "/v1/users", { body: { phone: p, external_id: "ext-dup" } });
      const phoneTaken = await svc.request("POST", "/v1/users", { body: { phone: p } });
      expectError(phoneTaken, 409, "invalid_request_error", "user_already_exists", "phone");
      expect(phoneTaken.body.error.message).to.equal("A user with this phone already exists in the project.");
      const externalIdTaken = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), external_id: "ext-dup" } });
      expectError(externalIdTaken, 409, "invalid_request_error", "user_already_exists", "external_id");
      expect(externalIdTaken.body.error.message).to.equal("A user with this external_id already exists in the project.");
      // The other environment is another namespace.
      expect((await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: p, external_id: "ext-dup" } })).status).to.equal(201);
    });

    it("409 tagname_already_taken, compared case-insensitively, on create and on update", async () => {
      await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), tagname: "Satoshi" } });
      expectError(
        await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), tagname: "satoshi" } }),
        409,
        "invalid_request_error",
        "tagname_already_taken",
        "tagname",
      );
      const other = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      expectError(
        await svc.request("PATCH", `/v1/users/${other.body.id}`, { body: { tagname: "SATOSHI" } }),
        409,
        "invalid_request_error",
        "tagname_already_taken",
        "tagname",
      );
      // A user may re-set its own tagname in another case.
      const owner = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), tagname: "OwnTag" } });
      const recased = await svc.request("PATCH", `/v1/users/${owner.body.id}`, { body: { tagname: "owntag" } });
      expect(recased.status).to.equal(200);
      expect(recased.body.profile.tagname).to.equal("owntag");
      // A cleared tagname is free again.
      await svc.request("PATCH", `/v1/users/${owner.body.id}`, { body: { tagname: null } });
      expect((await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), tagname: "OWNTAG" } })).status).to.equal(201);
    });
  });

  describe("PATCH semantics", () => {
    it("changes only the fields sent; null clears; absent keeps", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), first_name: "Ann", last_name: "Lee", country: "FR" } });
      const id = created.body.id;
      const first = await svc.request("GET", `/v1/users/${id}`);
      const res = await svc.request("PATCH", `/v1/users/${id}`, { body: { first_name: "Anna", country: null } });
      expect(res.status).to.equal(200);
      expect(res.body.profile).to.include({ first_name: "Anna", last_name: "Lee", country: null });
      expect(Date.parse(res.body.profile.updated_at)).to.be.at.least(Date.parse(first.body.profile.updated_at));
      expect(res.body.phone).to.equal(created.body.phone);
      const again = await svc.request("GET", `/v1/users/${id}`);
      expect(again.body.profile).to.deep.equal(res.body.profile);
    });

    it("an empty body changes nothing", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), first_name: "Kim" } });
      const before = await svc.request("GET", `/v1/users/${created.body.id}`);
      const res = await svc.request("PATCH", `/v1/users/${created.body.id}`, { body: {} });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(before.body);
    });

    it("the profile stays an object once stored, even when every field is cleared", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), first_name: "Lou" } });
      const res = await svc.request("PATCH", `/v1/users/${created.body.id}`, { body: { first_name: null } });
      expect(res.body.profile).to.be.an("object");
      expect(res.body.profile.first_name).to.equal(null);
    });

    it("clearing on a user without profile keeps profile null", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      const res = await svc.request("PATCH", `/v1/users/${created.body.id}`, { body: { email: null } });
      expect(res.body.profile).to.equal(null);
    });

    it("phone and external_id cannot be changed, with the message gRPC gives; other unknown keys are unknown", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      const phone = await svc.request("PATCH", `/v1/users/${created.body.id}`, { body: { phone: uniquePhone() } });
      expectError(phone, 422, "invalid_request_error", "validation_error", "phone");
      expect(phone.body.error.message).to.equal("phone cannot be changed.");
      const externalId = await svc.request("PATCH", `/v1/users/${created.body.id}`, { body: { first_name: "Al", external_id: "x-1" } });
      expectError(externalId, 422, "invalid_request_error", "validation_error", "external_id");
      expect(externalId.body.error.message).to.equal("external_id cannot be changed.");
      const unknown = await svc.request("PATCH", `/v1/users/${created.body.id}`, { body: { nickname: "Al" } });
      expectError(unknown, 422, "invalid_request_error", "validation_error", "nickname");
      expect(unknown.body.error.message).to.equal("Unknown parameter: nickname.");
      // Refused before the lookup, as over gRPC: the rule does not depend on the user.
      expectError(
        await svc.request("PATCH", "/v1/users/999999999", { body: { phone: uniquePhone() } }),
        422,
        "invalid_request_error",
        "validation_error",
        "phone",
      );
    });

    it("an empty terms_acceptance.version states the length rule", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      const empty = await svc.request("PATCH", `/v1/users/${created.body.id}`, {
        body: { terms_acceptance: { version: "", accepted_at: "2026-01-01T00:00:00Z" } },
      });
      expectError(empty, 422, "invalid_request_error", "validation_error", "terms_acceptance.version");
      expect(empty.body.error.message).to.equal("terms_acceptance.version must be 1 to 64 characters.");
    });

    it("400 invalid_json for a body that is not a JSON object", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      expectError(await svc.request("PATCH", `/v1/users/${created.body.id}`, { rawBody: "[1]" }), 400, "invalid_request_error", "invalid_json");
    });
  });

  describe("signup flow", () => {
    let key: string;
    let projectId: string;
    before(async () => {
      ({ projectId } = await createProject(svc, { organizationId: svc.organizationId }));
      key = (await createKey(svc, projectId)).secret;
    });

    const publish = (modules: [string, boolean, boolean][], extra: { minAge?: number; allowedCountries?: string[] } = {}) =>
      svc.admin.publishSignupFlow({
        projectId,
        livemode: false,
        modules: modules.map(([name, enabled, required]) => create(SignupModuleSettingSchema, { name, enabled, required })),
        allowedCountries: extra.allowedCountries ?? [],
        ...(extra.minAge !== undefined ? { minAge: extra.minAge } : {}),
      });

    it("unpublished: GET /v1/signup-config shows every module enabled and optional", async () => {
      const res = await svc.request("GET", "/v1/signup-config", { key });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ object: "signup_config", published: false, min_age: null, updated_at: null });
      expect(res.body.modules.email).to.deep.equal({ enabled: true, required: false });
      expect(Object.keys(res.body.modules)).to.have.length(8);
    });

    it("published: disabled module refused, required module demanded, required not clearable", async () => {
      await publish(
        [
          ["email", true, true],
          ["first_name", true, false],
          ["birth_date", true, false],
          ["country", true, false],
        ],
        { minAge: 18, allowedCountries: ["FR", "DE"] },
      );
      const config = await svc.request("GET", "/v1/signup-config", { key });
      expect(config.body).to.include({ published: true, min_age: 18 });
      expect(config.body.allowed_countries).to.deep.equal(["FR", "DE"]);
      expect(config.body.modules.tagname).to.deep.equal({ enabled: false, required: false });
      expect(config.body.modules.email).to.deep.equal({ enabled: true, required: true });

      // Rule 1: a field of a disabled module (tagname is not listed, so disabled).
      expectError(
        await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone(), email: "a@b.co", tagname: "abc" } }),
        422,
        "invalid_request_error",
        "validation_error",
        "tagname",
      );
      // Rule 1: a required module missing.
      expectError(
        await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } }),
        422,
        "invalid_request_error",
        "validation_error",
        "email",
      );
      // min_age and allowed_countries are enforced.
      const seventeen = new Date();
      seventeen.setUTCFullYear(seventeen.getUTCFullYear() - 17);
      expectError(
        await svc.request("POST", "/v1/users", {
          key,
          body: { phone: uniquePhone(), email: "a@b.co", birth_date: seventeen.toISOString().slice(0, 10) },
        }),
        422,
        "invalid_request_error",
        "validation_error",
        "birth_date",
      );
      expectError(
        await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone(), email: "a@b.co", country: "US" } }),
        422,
        "invalid_request_error",
        "validation_error",
        "country",
      );
      const ok = await svc.request("POST", "/v1/users", {
        key,
        body: { phone: uniquePhone(), email: "a@b.co", country: "fr", birth_date: "1990-05-05" },
      });
      expect(ok.status, ok.text).to.equal(201);
      // Rule 2: null clears an optional field, but not a required one.
      expect((await svc.request("PATCH", `/v1/users/${ok.body.id}`, { key, body: { country: null } })).status).to.equal(200);
      expectError(
        await svc.request("PATCH", `/v1/users/${ok.body.id}`, { key, body: { email: null } }),
        422,
        "invalid_request_error",
        "validation_error",
        "email",
      );
      // Updating a disabled module's field is refused too.
      expectError(
        await svc.request("PATCH", `/v1/users/${ok.body.id}`, { key, body: { tagname: "abc" } }),
        422,
        "invalid_request_error",
        "validation_error",
        "tagname",
      );
      // Publishing replaces the whole flow.
      await publish([["tagname", true, false]]);
      const replaced = await svc.request("GET", "/v1/signup-config", { key });
      expect(replaced.body.modules.email).to.deep.equal({ enabled: false, required: false });
      expect(replaced.body.min_age).to.equal(null);
    });
  });
});
