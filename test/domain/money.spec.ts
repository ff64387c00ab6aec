// The money rules that both the sandbox and the admin API apply (src/domain/money.ts).
import { expect } from "chai";
import { DEFAULT_FAILURE_CODE, failureCodeOf } from "../../src/domain/money.ts";
import { expectValidationError } from "../support/errors.ts";

describe("money rules", () => {
  describe("failureCodeOf", () => {
    it("answers a code of 1 to 64 lowercase letters, digits and underscores, starting with a letter, as given", () => {
      for (const code of [DEFAULT_FAILURE_CODE, "failed", "a", "card_declined_2", `a${"b".repeat(63)}`]) expect(failureCodeOf(code)).to.equal(code);
    });

    it("refuses anything else with 422 on failure_code, one message for every caller", () => {
      for (const code of ["", "Bad Code", "card-declined", "1abc", "_abc", "Abc", `a${"b".repeat(64)}`, "é"]) {
        expectValidationError(
          () => failureCodeOf(code),
          "failure_code",
          /^failure_code must be 1 to 64 lowercase letters, digits and underscores, starting with a letter\.$/,
        );
      }
    });
  });
});
