import { expect } from "chai";
import { expectValidationError } from "../support/errors.ts";
import { isAssignedCountryCode } from "../../src/domain/countries.ts";
import {
  tagnameKey,
  validateExternalId,
  validateNewUser,
  validateNewUserProfile,
  validatePhone,
  validateProfileUpdate,
  type ProfileInput,
  type ProfileValues,
} from "../../src/domain/profile-rules.ts";
import { UNPUBLISHED_SIGNUP_FLOW, buildSignupFlow, type PublishSignupFlowRequest, type SignupFlow } from "../../src/domain/signup-flow.ts";

const NOW = new Date("2026-11-22T10:00:00.000Z");

function publish(modules: PublishSignupFlowRequest["modules"], options: { minAge?: number; allowedCountries?: string[] } = {}): SignupFlow {
  return buildSignupFlow(
    { modules, allowedCountries: options.allowedCountries ?? [], ...(options.minAge === undefined ? {} : { minAge: options.minAge }) },
    NOW,
  );
}

/** A published flow enabling every module, none required, with the given options. */
function publishAll(options: { minAge?: number; allowedCountries?: string[] }): SignupFlow {
  return publish(
    ["email", "first_name", "last_name", "birth_date", "country", "referral_code", "terms_acceptance", "tagname"].map((name) => ({
      name,
      enabled: true,
      required: false,
    })),
    options,
  );
}

const emoji = "\u{1F600}"; // one code point, two UTF-16 units

const MODES: { mode: string; validate: (input: ProfileInput, flow: SignupFlow, now: Date) => ProfileValues }[] = [
  { mode: "create", validate: validateNewUserProfile },
  { mode: "update", validate: validateProfileUpdate },
];

describe("domain/profile-rules", () => {
  describe("validatePhone", () => {
    for (const phone of ["+14155550123", "+1234567", "+123456789012345", "+33612345678"]) {
      it(`accepts ${phone}`, () => {
        expect(validatePhone(phone)).to.equal(phone);
      });
    }

    for (const phone of ["+123456", "+1234567890123456", "14155550123", "+04155550123", "+1 415 555 0123", "+1415555012a"]) {
      it(`refuses '${phone}'`, () => {
        expectValidationError(() => validatePhone(phone), "phone", /E\.164/);
      });
    }

    it("treats an empty phone as missing", () => {
      expectValidationError(() => validatePhone(""), "phone", /required/);
    });
  });

  describe("validateExternalId", () => {
    it("accepts 1 and 128 characters, counted in code points", () => {
      expect(validateExternalId("a")).to.equal("a");
      expect(validateExternalId("x".repeat(128))).to.equal("x".repeat(128));
      expect(validateExternalId(emoji.repeat(128))).to.equal(emoji.repeat(128));
    });

    it("refuses an empty one and 129 characters", () => {
      expectValidationError(() => validateExternalId(""), "external_id", /1 to 128/);
      expectValidationError(() => validateExternalId("x".repeat(129)), "external_id", /1 to 128/);
    });
  });

  describe("isAssignedCountryCode", () => {
    it("knows exactly 249 assigned codes", () => {
      let assigned = 0;
      for (let first = 65; first <= 90; first++) {
        for (let second = 65; second <= 90; second++) {
          if (isAssignedCountryCode(String.fromCharCode(first, second))) assigned++;
        }
      }
      expect(assigned).to.equal(249);
    });

    it("accepts assigned codes in any case", () => {
      for (const code of ["FR", "fr", "gB", "AX", "SS", "BQ", "CW", "SX", "ZW"]) expect(isAssignedCountryCode(code), code).to.equal(true);
    });

    it("refuses reserved, user-assigned, withdrawn and non-ASCII codes", () => {
      for (const code of ["AA", "XX", "XK", "UK", "EU", "AN", "CS", "YU", "ZZ", "QM", "ß", "ıt", "FRA", ""]) {
        expect(isAssignedCountryCode(code), code).to.equal(false);
      }
    });
  });

  for (const { mode, validate } of MODES) {
    const check = (input: ProfileInput, flow: SignupFlow = UNPUBLISHED_SIGNUP_FLOW, now: Date = NOW) => validate(input, flow, now);

    describe(`input constraints on ${mode}`, () => {
      describe("email", () => {
        it("lowercases", () => {
          expect(check({ email: "Ada.Lovelace@Example.COM" })).to.deep.equal({ email: "ada.lovelace@example.com" });
        });

        it("accepts 254 characters and a dot-free domain", () => {
          const email = `${"a".repeat(242)}@example.com`;
          expect(email).to.have.length(254);
          expect(check({ email }).email).to.equal(email);
          expect(check({ email: "root@localhost" }).email).to.equal("root@localhost");
        });

        it("refuses 255 characters", () => {
          expectValidationError(() => check({ email: `${"a".repeat(243)}@example.com` }), "email", /at most 254/);
        });

        for (const email of ["ada", "", "ada@", "@example.com", "ada@@example.com", "a@b@example.com", "ada @example.com", "ada@exa\tmple.com"]) {
          it(`refuses the malformed '${email}'`, () => {
            expectValidationError(() => check({ email }), "email", /local@domain/);
          });
        }
      });

      for (const field of ["first_name", "last_name"] as const) {
        describe(field, () => {
          it("accepts 1 and 100 characters, counted in code points, as given", () => {
            expect(check({ [field]: "A" })[field]).to.equal("A");
            expect(check({ [field]: "Zoë" })[field]).to.equal("Zoë");
            expect(check({ [field]: "n".repeat(100) })[field]).to.equal("n".repeat(100));
            expect(check({ [field]: emoji.repeat(100) })[field]).to.equal(emoji.repeat(100));
          });

          it("refuses an empty name and 101 characters", () => {
            expectValidationError(() => check({ [field]: "" }), field, /1 to 100/);
            expectValidationError(() => check({ [field]: "n".repeat(101) }), field, /1 to 100/);
            expectValidationError(() => check({ [field]: emoji.repeat(101) }), field, /1 to 100/);
          });
        });
      }

      describe("birth_date", () => {
        it("accepts a past date, 29 February of a leap year, and today", () => {
          expect(check({ birth_date: "1990-05-17" }).birth_date).to.equal("1990-05-17");
          expect(check({ birth_date: "2024-02-29" }).birth_date).to.equal("2024-02-29");
          expect(check({ birth_date: "2026-11-22" }).birth_date).to.equal("2026-11-22");
        });

        for (const birthDate of ["1990-5-17", "17/05/1990", "1990-05-17T00:00:00Z", " 1990-05-17", "19900517"]) {
          it(`refuses the pattern of '${birthDate}'`, () => {
            expectValidationError(() => check({ birth_date: birthDate }), "birth_date", /YYYY-MM-DD/);
          });
        }

        for (const birthDate of ["2023-02-29", "1900-02-29", "1990-13-01", "1990-04-31", "1990-00-10"]) {
          it(`refuses the unreal date ${birthDate}`, () => {
            expectValidationError(() => check({ birth_date: birthDate }), "birth_date", /real calendar date/);
          });
        }

        it("refuses years before 1900 and accepts 1900-01-01", () => {
          for (const birthDate of ["0000-01-01", "0001-01-01", "1000-06-15", "1899-12-31"]) {
            expectValidationError(() => check({ birth_date: birthDate }), "birth_date", /1900-01-01 or later/);
          }
          expect(check({ birth_date: "1900-01-01" }).birth_date).to.equal("1900-01-01");
        });

        it("refuses tomorrow (UTC)", () => {
          expectValidationError(() => check({ birth_date: "2026-11-23" }), "birth_date", /future/);
          const lateEvening = new Date("2026-11-22T23:59:59.999Z");
          expect(check({ birth_date: "2026-11-22" }, UNPUBLISHED_SIGNUP_FLOW, lateEvening).birth_date).to.equal("2026-11-22");
        });

        describe("min_age", () => {
          const adultsOnly = publishAll({ minAge: 18 });

          it("accepts someone whose 18th birthday is today", () => {
            expect(check({ birth_date: "2008-11-22" }, adultsOnly).birth_date).to.equal("2008-11-22");
          });

          it("refuses someone whose 18th birthday is tomorrow", () => {
            expectValidationError(() => check({ birth_date: "2008-11-23" }, adultsOnly), "birth_date", /at least 18/);
          });

          it("uses the UTC date of now", () => {
            const justBeforeMidnight = new Date("2026-11-21T23:59:59.999Z");
            expectValidationError(() => check({ birth_date: "2008-11-22" }, adultsOnly, justBeforeMidnight), "birth_date", /at least 18/);
          });

          it("makes someone born on 29 February come of age on 1 March of a common year", () => {
            const lastDayOfFebruary = new Date("2026-02-28T12:00:00Z");
            const firstOfMarch = new Date("2026-03-01T00:00:00Z");
            expectValidationError(() => check({ birth_date: "2008-02-29" }, adultsOnly, lastDayOfFebruary), "birth_date", /at least 18/);
            expect(check({ birth_date: "2008-02-29" }, adultsOnly, firstOfMarch).birth_date).to.equal("2008-02-29");
          });

          it("is not enforced without min_age", () => {
            expect(check({ birth_date: "2026-11-01" }, publishAll({})).birth_date).to.equal("2026-11-01");
          });
        });
      });

      describe("country", () => {
        it("accepts an assigned code in any case and uppercases it", () => {
          expect(check({ country: "fr" })).to.deep.equal({ country: "FR" });
          expect(check({ country: "Gb" })).to.deep.equal({ country: "GB" });
        });

        for (const country of ["XX", "AA", "xk", "UK", "EU"]) {
          it(`refuses the unassigned code ${country}`, () => {
            expectValidationError(() => check({ country }), "country", /not an assigned/);
          });
        }

        for (const country of ["FRA", "F", "F1", "", "ß"]) {
          it(`refuses the pattern of '${country}'`, () => {
            expectValidationError(() => check({ country }), "country", /two-letter/);
          });
        }

        it("enforces allowed_countries when the flow lists some", () => {
          const flow = publishAll({ allowedCountries: ["DE", "FR"] });
          expect(check({ country: "fr" }, flow).country).to.equal("FR");
          expectValidationError(() => check({ country: "GB" }, flow), "country", /not accepted.*DE, FR/);
        });

        it("accepts any assigned code when allowed_countries is empty", () => {
          expect(check({ country: "JP" }, publishAll({ allowedCountries: [] })).country).to.equal("JP");
        });
      });

      describe("referral_code", () => {
        it("accepts 3 and 32 characters of the pattern, as given", () => {
          expect(check({ referral_code: "abc" }).referral_code).to.equal("abc");
          expect(check({ referral_code: "A_b-9" }).referral_code).to.equal("A_b-9");
          expect(check({ referral_code: "R".repeat(32) }).referral_code).to.equal("R".repeat(32));
        });

        for (const code of ["ab", "R".repeat(33), "ab c", "abc!", "abc.d", "ábc"]) {
          it(`refuses '${code}'`, () => {
            expectValidationError(() => check({ referral_code: code }), "referral_code", /3 to 32/);
          });
        }
      });

      describe("terms_acceptance", () => {
        const acceptedAt = new Date("2026-11-01T09:00:00.000Z");

        it("accepts a version of 1 and 64 characters and an acceptance up to now", () => {
          expect(check({ terms_acceptance: { version: "v", accepted_at: acceptedAt } }).terms_acceptance).to.deep.equal({
            version: "v",
            accepted_at: acceptedAt,
          });
          const version = "v".repeat(64);
          expect(check({ terms_acceptance: { version, accepted_at: NOW } }).terms_acceptance).to.deep.equal({
            version,
            accepted_at: NOW,
          });
        });

        it("refuses an empty (or missing) or 65-character version, stating the length rule", () => {
          expectValidationError(
            () => check({ terms_acceptance: { version: "", accepted_at: acceptedAt } }),
            "terms_acceptance.version",
            /^terms_acceptance\.version must be 1 to 64 characters\.$/,
          );
          expectValidationError(
            () => check({ terms_acceptance: { version: "v".repeat(65), accepted_at: acceptedAt } }),
            "terms_acceptance.version",
            /^terms_acceptance\.version must be 1 to 64 characters\.$/,
          );
        });

        it("refuses a missing accepted_at", () => {
          expectValidationError(
            () => check({ terms_acceptance: { version: "2026-11", accepted_at: null } }),
            "terms_acceptance.accepted_at",
            /required/,
          );
        });

        it("refuses an accepted_at one millisecond after now", () => {
          expectValidationError(
            () => check({ terms_acceptance: { version: "2026-11", accepted_at: new Date(NOW.getTime() + 1) } }),
            "terms_acceptance.accepted_at",
            /future/,
          );
        });

        it("refuses an invalid Date", () => {
          expectValidationError(
            () => check({ terms_acceptance: { version: "2026-11", accepted_at: new Date(Number.NaN) } }),
            "terms_acceptance.accepted_at",
            /date-time/,
          );
        });
      });

      describe("tagname", () => {
        it("accepts 3 and 30 characters of the pattern, kept as given", () => {
          expect(check({ tagname: "ada" }).tagname).to.equal("ada");
          expect(check({ tagname: "Ada.Lovelace_1-x" }).tagname).to.equal("Ada.Lovelace_1-x");
          expect(check({ tagname: "T".repeat(30) }).tagname).to.equal("T".repeat(30));
        });

        for (const tagname of ["ab", "T".repeat(31), "ada lovelace", "adá", "ada@home", ""]) {
          it(`refuses '${tagname}'`, () => {
            expectValidationError(() => check({ tagname }), "tagname", /3 to 30/);
          });
        }
      });

      it("refuses a value of the wrong type", () => {
        expectValidationError(() => check({ email: 42 as unknown as string }), "email", /must be a string/);
        expectValidationError(
          () => check({ terms_acceptance: { version: 1 as unknown as string, accepted_at: NOW } }),
          "terms_acceptance.version",
          /must be a string/,
        );
      });

      it("reports the first wrong field in PROFILE_FIELD_NAMES order, whatever the key order", () => {
        const input: ProfileInput = { tagname: "x", country: "XX", first_name: "", email: "nope" };
        expectValidationError(() => check(input), "email");
        expectValidationError(() => check({ ...input, email: "a@b.c" }), "first_name");
        expectValidationError(() => check({ ...input, email: "a@b.c", first_name: "A" }), "country");
        expectValidationError(() => check({ ...input, email: "a@b.c", first_name: "A", country: "FR" }), "tagname");
      });
    });
  }

  it("tagnameKey folds case for the uniqueness check", () => {
    expect(tagnameKey("Ada.Lovelace")).to.equal("ada.lovelace");
    expect(tagnameKey("ADA.LOVELACE")).to.equal(tagnameKey("ada.lovelace"));
  });

  describe("validateNewUserProfile", () => {
    it("normalises a full profile", () => {
      const acceptedAt = new Date("2026-11-20T08:00:00.000Z");
      const values = validateNewUserProfile(
        {
          email: "Ada@Example.com",
          first_name: "Ada",
          last_name: "Lovelace",
          birth_date: "1990-12-10",
          country: "gb",
          referral_code: "Friend_2026",
          terms_acceptance: { version: "2026-11", accepted_at: acceptedAt },
          tagname: "Ada.L",
        },
        UNPUBLISHED_SIGNUP_FLOW,
        NOW,
      );
      expect(values).to.deep.equal({
        email: "ada@example.com",
        first_name: "Ada",
        last_name: "Lovelace",
        birth_date: "1990-12-10",
        country: "GB",
        referral_code: "Friend_2026",
        terms_acceptance: { version: "2026-11", accepted_at: acceptedAt },
        tagname: "Ada.L",
      });
    });

    it("stores nothing for absent or null fields when no flow is published", () => {
      expect(validateNewUserProfile({}, UNPUBLISHED_SIGNUP_FLOW, NOW)).to.deep.equal({});
      expect(validateNewUserProfile({ email: null, tagname: null }, UNPUBLISHED_SIGNUP_FLOW, NOW)).to.deep.equal({});
    });
  });

  describe("signup-flow rules", () => {
    // email required, first_name optional, last_name listed but disabled, terms_acceptance required,
    // everything else disabled by omission.
    const flow = publish([
      { name: "email", enabled: true, required: true },
      { name: "first_name", enabled: true, required: false },
      { name: "last_name", enabled: false, required: false },
      { name: "terms_acceptance", enabled: true, required: true },
    ]);
    const terms = { version: "2026-11", accepted_at: new Date("2026-11-21T00:00:00Z") };
    const complete: ProfileInput = { email: "ada@example.com", terms_acceptance: terms };

    describe("on create", () => {
      it("accepts the required modules with an optional one", () => {
        expect(validateNewUserProfile({ ...complete, first_name: "Ada" }, flow, NOW)).to.deep.equal({
          email: "ada@example.com",
          first_name: "Ada",
          terms_acceptance: terms,
        });
      });

      it("demands every required module", () => {
        expectValidationError(() => validateNewUserProfile({ terms_acceptance: terms }, flow, NOW), "email", /required by this project/);
        expectValidationError(() => validateNewUserProfile({ email: "ada@example.com" }, flow, NOW), "terms_acceptance", /required by this project/);
      });

      it("treats null as missing for a required module", () => {
        expectValidationError(() => validateNewUserProfile({ ...complete, email: null }, flow, NOW), "email", /required/);
        expectValidationError(() => validateNewUserProfile({ ...complete, terms_acceptance: null }, flow, NOW), "terms_acceptance", /required/);
      });

      it("refuses a field of a module listed as disabled", () => {
        expectValidationError(() => validateNewUserProfile({ ...complete, last_name: "L" }, flow, NOW), "last_name", /not collected/);
      });

      it("refuses a field of a module the flow does not list", () => {
        expectValidationError(() => validateNewUserProfile({ ...complete, tagname: "ada" }, flow, NOW), "tagname", /not collected/);
        expectValidationError(() => validateNewUserProfile({ ...complete, country: "FR" }, flow, NOW), "country", /not collected/);
      });

      it("refuses a disabled module even when sent as null", () => {
        expectValidationError(() => validateNewUserProfile({ ...complete, last_name: null }, flow, NOW), "last_name", /not collected/);
      });

      it("checks the flow before the field's own rules", () => {
        expectValidationError(() => validateNewUserProfile({ ...complete, tagname: "!" }, flow, NOW), "tagname", /not collected/);
      });

      it("reports flow failures in PROFILE_FIELD_NAMES order too", () => {
        expectValidationError(() => validateNewUserProfile({ last_name: "L", tagname: "ada" }, flow, NOW), "email");
        expectValidationError(() => validateNewUserProfile({ email: "ada@example.com", tagname: "ada", last_name: "L" }, flow, NOW), "last_name");
      });
    });

    describe("on update", () => {
      it("needs no field: required modules already stored stay", () => {
        expect(validateProfileUpdate({}, flow, NOW)).to.deep.equal({});
      });

      it("changes only the fields sent", () => {
        expect(validateProfileUpdate({ email: "New@Example.com" }, flow, NOW)).to.deep.equal({ email: "new@example.com" });
      });

      it("clears an optional module with null", () => {
        expect(validateProfileUpdate({ first_name: null }, flow, NOW)).to.deep.equal({ first_name: null });
      });

      it("refuses null for a required module", () => {
        expectValidationError(() => validateProfileUpdate({ email: null }, flow, NOW), "email", /cannot be cleared/);
        expectValidationError(
          () => validateProfileUpdate({ first_name: null, terms_acceptance: null }, flow, NOW),
          "terms_acceptance",
          /cannot be cleared/,
        );
      });

      it("refuses a field of a disabled module, value or null", () => {
        expectValidationError(() => validateProfileUpdate({ last_name: "L" }, flow, NOW), "last_name", /not collected/);
        expectValidationError(() => validateProfileUpdate({ tagname: null }, flow, NOW), "tagname", /not collected/);
      });
    });

    describe("unpublished flow", () => {
      it("makes every field optional and clearable", () => {
        expect(validateNewUserProfile({ tagname: "ada" }, UNPUBLISHED_SIGNUP_FLOW, NOW)).to.deep.equal({ tagname: "ada" });
        const clearAll = {
          email: null,
          first_name: null,
          last_name: null,
          birth_date: null,
          country: null,
          referral_code: null,
          terms_acceptance: null,
          tagname: null,
        };
        expect(validateProfileUpdate(clearAll, UNPUBLISHED_SIGNUP_FLOW, NOW)).to.deep.equal(clearAll);
      });
    });
  });

  describe("validateNewUser", () => {
    it("returns phone, external_id and the profile values", () => {
      expect(validateNewUser({ phone: "+14155550123", external_id: "cust_1", email: "A@B.C" }, UNPUBLISHED_SIGNUP_FLOW, NOW)).to.deep.equal({
        phone: "+14155550123",
        external_id: "cust_1",
        profile: { email: "a@b.c" },
      });
    });

    it("gives external_id null when absent or null", () => {
      expect(validateNewUser({ phone: "+14155550123" }, UNPUBLISHED_SIGNUP_FLOW, NOW).external_id).to.equal(null);
      expect(validateNewUser({ phone: "+14155550123", external_id: null }, UNPUBLISHED_SIGNUP_FLOW, NOW).external_id).to.equal(null);
    });

    it("reports phone, then external_id, then the profile fields", () => {
      const flow = publish([{ name: "email", enabled: true, required: true }]);
      const bad = { tagname: "x", email: "nope", external_id: "", phone: "0" };
      expectValidationError(() => validateNewUser(bad, flow, NOW), "phone");
      expectValidationError(() => validateNewUser({ ...bad, phone: "+14155550123" }, flow, NOW), "external_id");
      expectValidationError(() => validateNewUser({ ...bad, phone: "+14155550123", external_id: "e" }, flow, NOW), "email");
      expectValidationError(() => validateNewUser({ ...bad, phone: "+14155550123", external_id: "e", email: "a@b.c" }, flow, NOW), "tagname");
    });
  });
});
