import { expect } from "chai";
import { checkText, FREE_TEXT_FIELDS, textProblem } from "../../src/domain/text.ts";
import { expectValidationError } from "../support/errors.ts";

describe("textProblem", () => {
  it("accepts ordinary text, astral characters and surrogate pairs", () => {
    for (const value of ["", "Ada Lovelace", "é ü ñ 中文", "😀", "\ud83d\ude00", "a\u0080b", "\u00a0", "\uffff"]) {
      expect(textProblem(value, false), JSON.stringify(value)).to.equal(null);
    }
  });

  it("refuses NUL, every other C0 control and DEL in one-line fields", () => {
    for (let code = 0; code < 0x20; code++) {
      expect(textProblem(`a${String.fromCharCode(code)}b`, false), `U+${code.toString(16)}`).to.be.a("string");
    }
    expect(textProblem("\u007f", false)).to.contain("U+007F");
    expect(textProblem("a\u0000", false)).to.contain("NUL");
  });

  it("allows tab and line feed in free text only", () => {
    expect(textProblem("one\n\ttwo", true)).to.equal(null);
    expect(textProblem("one\ntwo", false)).to.contain("U+000A");
    for (const value of ["\r", "\u0000", "\u000b", "\u001f", "\u007f"])
      expect(textProblem(value, true), JSON.stringify(value)).to.contain("only tab and line feed");
  });

  it("refuses lone surrogates, high or low, anywhere", () => {
    for (const value of ["\ud800", "a\udbff", "\udc00z", "\ude00\ud83d", "\ud83d\ude00\ud83d"]) {
      expect(textProblem(value, true), JSON.stringify(value)).to.contain("lone UTF-16 surrogate");
    }
  });
});

describe("checkText", () => {
  it("names the parameter, and knows description as free text", () => {
    expect(FREE_TEXT_FIELDS.has("description")).to.equal(true);
    expect(checkText("description", "a\nb", "description")).to.equal("a\nb");
    expectValidationError(() => checkText("first_name", "a\nb", "first_name"), "first_name", /control characters/);
    expectValidationError(() => checkText("event_types[1]", "x\u0000", "event_types"), "event_types[1]", /NUL/);
  });
});
