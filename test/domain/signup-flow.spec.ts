import { expect } from "chai";
import { expectValidationError } from "../support/errors.ts";
import { PROFILE_FIELD_NAMES, UNPUBLISHED_SIGNUP_FLOW, buildSignupFlow, type PublishSignupFlowRequest } from "../../src/domain/signup-flow.ts";

const NOW = new Date("2026-11-22T10:00:00.000Z");

function request(overrides: Partial<PublishSignupFlowRequest> = {}): PublishSignupFlowRequest {
  return {
    modules: [
      { name: "email", enabled: true, required: true },
      { name: "country", enabled: true, required: false },
    ],
    allowedCountries: [],
    ...overrides,
  };
}

describe("domain/signup-flow", () => {
  it("lists the profile fields in reporting order", () => {
    expect(PROFILE_FIELD_NAMES).to.deep.equal([
      "email",
      "first_name",
      "last_name",
      "birth_date",
      "country",
      "referral_code",
      "terms_acceptance",
      "tagname",
    ]);
  });

  describe("UNPUBLISHED_SIGNUP_FLOW", () => {
    it("accepts every field and requires none", () => {
      expect(UNPUBLISHED_SIGNUP_FLOW.published).to.equal(false);
      for (const name of PROFILE_FIELD_NAMES) {
        expect(UNPUBLISHED_SIGNUP_FLOW.modules[name], name).to.deep.equal({ enabled: true, required: false });
      }
      expect(UNPUBLISHED_SIGNUP_FLOW.minAge).to.equal(null);
      expect(UNPUBLISHED_SIGNUP_FLOW.allowedCountries).to.deep.equal([]);
      expect(UNPUBLISHED_SIGNUP_FLOW.updatedAt).to.equal(null);
    });

    it("cannot be changed by accident", () => {
      expect(() => {
        UNPUBLISHED_SIGNUP_FLOW.modules.email.required = true;
      }).to.throw(TypeError);
      expect(() => UNPUBLISHED_SIGNUP_FLOW.allowedCountries.push("FR")).to.throw(TypeError);
      expect(UNPUBLISHED_SIGNUP_FLOW.modules.email.required).to.equal(false);
    });
  });

  describe("buildSignupFlow", () => {
    it("publishes the listed modules and disables every other one", () => {
      const flow = buildSignupFlow(request(), NOW);
      expect(flow.published).to.equal(true);
      expect(flow.updatedAt?.getTime()).to.equal(NOW.getTime());
      expect(flow.modules).to.deep.equal({
        email: { enabled: true, required: true },
        first_name: { enabled: false, required: false },
        last_name: { enabled: false, required: false },
        birth_date: { enabled: false, required: false },
        country: { enabled: true, required: false },
        referral_code: { enabled: false, required: false },
        terms_acceptance: { enabled: false, required: false },
        tagname: { enabled: false, required: false },
      });
      expect(flow.minAge).to.equal(null);
      expect(flow.allowedCountries).to.deep.equal([]);
    });

    it("keeps a module listed as disabled disabled", () => {
      const flow = buildSignupFlow(request({ modules: [{ name: "tagname", enabled: false, required: false }] }), NOW);
      expect(flow.modules.tagname).to.deep.equal({ enabled: false, required: false });
    });

    it("disables everything when no module is listed", () => {
      const flow = buildSignupFlow(request({ modules: [] }), NOW);
      for (const name of PROFILE_FIELD_NAMES) expect(flow.modules[name].enabled, name).to.equal(false);
    });

    it("refuses an unknown module name, naming its entry", () => {
      const modules = [
        { name: "email", enabled: true, required: false },
        { name: "nickname", enabled: true, required: false },
      ];
      expectValidationError(() => buildSignupFlow(request({ modules }), NOW), "modules[1].name", /nickname/);
    });

    it("refuses a module listed twice, naming the second entry", () => {
      const modules = [
        { name: "email", enabled: true, required: false },
        { name: "country", enabled: true, required: false },
        { name: "email", enabled: false, required: false },
      ];
      expectValidationError(() => buildSignupFlow(request({ modules }), NOW), "modules[2].name", /more than once/);
    });

    it("refuses a required module that is not enabled", () => {
      const modules = [{ name: "birth_date", enabled: false, required: true }];
      expectValidationError(() => buildSignupFlow(request({ modules }), NOW), "modules[0].required", /enabled/);
    });

    it("accepts min_age 0 and 150", () => {
      expect(buildSignupFlow(request({ minAge: 0 }), NOW).minAge).to.equal(0);
      expect(buildSignupFlow(request({ minAge: 150 }), NOW).minAge).to.equal(150);
      expect(buildSignupFlow(request({ minAge: 18 }), NOW).minAge).to.equal(18);
    });

    for (const minAge of [-1, 151, 17.5, Number.NaN]) {
      it(`refuses min_age ${minAge}`, () => {
        expectValidationError(() => buildSignupFlow(request({ minAge }), NOW), "min_age", /0 to 150/);
      });
    }

    it("uppercases the allowed countries", () => {
      const flow = buildSignupFlow(request({ allowedCountries: ["fr", "De", "GB"] }), NOW);
      expect(flow.allowedCountries).to.deep.equal(["FR", "DE", "GB"]);
    });

    for (const code of ["XX", "AA", "UK", "FRA", "F", ""]) {
      it(`refuses the allowed country '${code}'`, () => {
        expectValidationError(() => buildSignupFlow(request({ allowedCountries: ["FR", code] }), NOW), "allowed_countries[1]", /not an assigned/);
      });
    }

    it("refuses an allowed country listed twice in any case", () => {
      expectValidationError(() => buildSignupFlow(request({ allowedCountries: ["FR", "DE", "fr"] }), NOW), "allowed_countries[2]", /more than once/);
    });

    it("reports modules before min_age before allowed_countries", () => {
      const bad = {
        modules: [{ name: "nickname", enabled: true, required: false }],
        minAge: -1,
        allowedCountries: ["XX"],
      };
      expectValidationError(() => buildSignupFlow(bad, NOW), "modules[0].name");
      expectValidationError(() => buildSignupFlow({ ...bad, modules: [] }, NOW), "min_age");
      expectValidationError(() => buildSignupFlow({ ...bad, modules: [], minAge: 18 }, NOW), "allowed_countries[0]");
    });
  });
});
