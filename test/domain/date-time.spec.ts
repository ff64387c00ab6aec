import { expect } from "chai";
import { formatTimestamp, isCalendarDate, parseDateTime } from "../../src/domain/date-time.ts";

function instant(value: string): number | null {
  return parseDateTime(value)?.getTime() ?? null;
}

describe("domain/date-time", () => {
  describe("parseDateTime", () => {
    it("parses a UTC date-time with Z", () => {
      expect(instant("2026-11-22T10:00:00Z")).to.equal(Date.UTC(2026, 10, 22, 10, 0, 0));
    });

    it("accepts lowercase t and z", () => {
      expect(instant("2026-11-22t10:00:00z")).to.equal(Date.UTC(2026, 10, 22, 10, 0, 0));
    });

    it("applies positive and negative offsets", () => {
      expect(instant("2026-11-22T10:00:00+02:00")).to.equal(Date.UTC(2026, 10, 22, 8, 0, 0));
      expect(instant("2026-11-22T10:00:00-05:30")).to.equal(Date.UTC(2026, 10, 22, 15, 30, 0));
      expect(instant("2026-11-22T10:00:00-00:00")).to.equal(Date.UTC(2026, 10, 22, 10, 0, 0));
    });

    it("crosses a day boundary through the offset", () => {
      expect(instant("2026-12-31T23:30:00-01:00")).to.equal(Date.UTC(2027, 0, 1, 0, 30, 0));
    });

    it("keeps fractions to the millisecond and truncates beyond", () => {
      expect(instant("2026-11-22T10:00:00.5Z")).to.equal(Date.UTC(2026, 10, 22, 10, 0, 0, 500));
      expect(instant("2026-11-22T10:00:00.123Z")).to.equal(Date.UTC(2026, 10, 22, 10, 0, 0, 123));
      expect(instant("2026-11-22T10:00:00.123999999Z")).to.equal(Date.UTC(2026, 10, 22, 10, 0, 0, 123));
    });

    it("accepts 29 February of a leap year only", () => {
      expect(instant("2024-02-29T12:00:00Z")).to.equal(Date.UTC(2024, 1, 29, 12));
      expect(instant("2000-02-29T12:00:00Z")).to.equal(Date.UTC(2000, 1, 29, 12));
      expect(instant("2026-02-29T12:00:00Z")).to.equal(null);
      expect(instant("1900-02-29T12:00:00Z")).to.equal(null);
    });

    it("does not shift years below 100 into the 1900s", () => {
      expect(parseDateTime("0099-01-01T00:00:00Z")?.getUTCFullYear()).to.equal(99);
    });

    it("accepts the last valid value of every time field", () => {
      expect(instant("2026-11-30T23:59:59+23:59")).to.equal(Date.UTC(2026, 10, 30, 0, 0, 59));
    });

    const invalid: [string, string][] = [
      ["no offset", "2026-11-22T10:00:00"],
      ["date only", "2026-11-22"],
      ["space instead of T", "2026-11-22 10:00:00Z"],
      ["no seconds", "2026-11-22T10:00Z"],
      ["empty fraction", "2026-11-22T10:00:00.Z"],
      ["offset without colon", "2026-11-22T10:00:00+0200"],
      ["offset hour 24", "2026-11-22T10:00:00+24:00"],
      ["offset minute 60", "2026-11-22T10:00:00+01:60"],
      ["month 13", "2026-13-01T10:00:00Z"],
      ["month 0", "2026-00-01T10:00:00Z"],
      ["day 31 of November", "2026-11-31T10:00:00Z"],
      ["day 0", "2026-11-00T10:00:00Z"],
      ["hour 24", "2026-11-22T24:00:00Z"],
      ["minute 60", "2026-11-22T10:60:00Z"],
      ["leap second", "2026-12-31T23:59:60Z"],
      ["leading space", " 2026-11-22T10:00:00Z"],
      ["trailing text", "2026-11-22T10:00:00Zx"],
      ["two-digit year", "26-11-22T10:00:00Z"],
      ["empty string", ""],
    ];
    for (const [reason, value] of invalid) {
      it(`refuses ${reason}: '${value}'`, () => {
        expect(parseDateTime(value)).to.equal(null);
      });
    }
  });

  describe("isCalendarDate", () => {
    const cases: [string, boolean][] = [
      ["2026-11-22", true],
      ["2026-12-31", true],
      ["2024-02-29", true],
      ["2000-02-29", true],
      ["2026-02-28", true],
      ["2026-02-29", false],
      ["1900-02-29", false],
      ["2026-04-31", false],
      ["2026-00-10", false],
      ["2026-13-10", false],
      ["2026-01-00", false],
      ["2026-1-01", false],
      ["2026-11-22T00:00:00Z", false],
      ["22-11-2026", false],
      ["", false],
    ];
    for (const [value, expected] of cases) {
      it(`'${value}' is ${expected ? "" : "not "}a calendar date`, () => {
        expect(isCalendarDate(value)).to.equal(expected);
      });
    }
  });

  describe("formatTimestamp", () => {
    it("writes RFC 3339 UTC with milliseconds", () => {
      expect(formatTimestamp(new Date(Date.UTC(2026, 10, 22, 8, 5, 3, 7)))).to.equal("2026-11-22T08:05:03.007Z");
    });

    it("round-trips through parseDateTime", () => {
      const date = new Date(Date.UTC(2026, 1, 3, 4, 5, 6, 789));
      expect(instant(formatTimestamp(date))).to.equal(date.getTime());
    });
  });
});
