// Collations (mongod's ICU string comparison) on Node's built-in ICU through Intl.Collator. A collation document is
// checked the way mongod's collator factory checks it (same codes and messages), filled in with the locale's
// defaults (the spec listCollections and listIndexes report), and turned into one string comparison function.
// Options Intl.Collator cannot express are refused with BadValue rather than approximated.
import type { Document } from "bson";
import { bsonTypeName } from "../bson/bson-type-names.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { formatValue } from "../bson/format.ts";

/** A string comparison: negative, zero or positive. */
export type StringCompare = (a: string, b: string) => number;

export interface Collation {
  /** The whole spec, every field filled in, in mongod's field order (as listCollections/listIndexes show it). */
  readonly spec: Document;
  /** Identity of the collation: two collations compare strings alike when their ids are equal. */
  readonly id: string;
  readonly compare: StringCompare;
}

/** The ICU version mongod 7.0 reports in every collation spec (its vendored ICU). */
export const ICU_VERSION = "57.1";

const IncompatibleCollationVersion = 12;

// ICU's legacy `@collation=` keyword values and their BCP 47 `-u-co-` spellings.
const COLLATION_KEYWORDS: Record<string, string> = {
  phonebook: "phonebk",
  traditional: "trad",
  dictionary: "dict",
  gb2312han: "gb2312",
  big5han: "big5han",
  pinyin: "pinyin",
  stroke: "stroke",
  unihan: "unihan",
  zhuyin: "zhuyin",
  search: "search",
  searchjl: "searchjl",
  standard: "standard",
  compat: "compat",
  eor: "eor",
  emoji: "emoji",
  reformed: "reformed",
};

function wrongType(field: string, expected: string, v: unknown): never {
  throw commandError(ErrorCodes.TypeMismatch, `"${field}" had the wrong type. Expected ${expected}, found ${bsonTypeName(v)}`);
}

function boolField(spec: Document, field: string): boolean | undefined {
  const v = spec[field];
  if (v === undefined) return undefined;
  if (typeof v !== "boolean") wrongType(field, "bool", v);
  return v;
}

function stringField(spec: Document, field: string): string | undefined {
  const v = spec[field];
  if (v === undefined) return undefined;
  if (typeof v !== "string") wrongType(field, "string", v);
  return v;
}

function enumField(spec: Document, field: string, allowed: string[]): string | undefined {
  const v = stringField(spec, field);
  if (v === undefined || allowed.includes(v)) return v;
  const choices = allowed.length === 2 ? `'${allowed[0]}' or '${allowed[1]}'` : `'${allowed[0]}', '${allowed[1]}', or '${allowed[2]}'`;
  throw commandError(ErrorCodes.FailedToParse, `Field '${field}' must be ${choices}. Got: ${v}`);
}

function strengthField(spec: Document): number | undefined {
  const v = spec.strength;
  if (v === undefined) return undefined;
  const t = (v as { _bsontype?: string } | null)?._bsontype;
  const n = typeof v === "number" ? v : t === "Int32" || t === "Double" || t === "Long" || t === "Decimal128" ? Number(String(v)) : undefined;
  if (n === undefined) throw commandError(ErrorCodes.TypeMismatch, `Expected field "strength" to have numeric type, but found ${bsonTypeName(v)}`);
  if (!Number.isInteger(n)) {
    throw commandError(
      ErrorCodes.BadValue,
      `Expected field "strength" to have a value exactly representable as a 64-bit integer, but found strength: ${formatValue(v)}`,
    );
  }
  if (n < 1 || n > 5) throw commandError(ErrorCodes.FailedToParse, `Field 'strength' must be an integer 1 through 5. Got: ${n}`);
  return n;
}

/** The BCP 47 tag Intl understands for an ICU locale id (`en_US`, `de@collation=phonebook`), or undefined. */
function bcp47(locale: string): { tag: string; keyword: string | undefined } | undefined {
  const [base, keywords, ...rest] = locale.split("@");
  if (rest.length || !base) return undefined;
  let keyword: string | undefined;
  if (keywords !== undefined) {
    const name = /^collation=(\w+)$/.exec(keywords)?.[1];
    keyword = name === undefined ? undefined : COLLATION_KEYWORDS[name];
    if (!keyword) return undefined;
  }
  let tag = base.replace(/_/g, "-");
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    // ICU ids are case-sensitive for mongod: "en_us" is not "en_US".
    if (!canonical || canonical.toLowerCase() !== tag.toLowerCase() || canonical !== tag) return undefined;
  } catch {
    return undefined;
  }
  if (keyword && keyword !== "standard") tag += `-u-co-${keyword}`;
  return { tag, keyword };
}

function validateLocale(locale: string, raw: Document): { tag: string; keyword: string | undefined } {
  if (locale.includes("\0")) {
    throw commandError(ErrorCodes.BadValue, `Field 'locale' cannot contain null byte. Collation spec: ${formatValue(raw)}`);
  }
  if (locale === "") throw commandError(ErrorCodes.BadValue, `Field 'locale' cannot be the empty string in: ${formatValue(raw)}`);
  const parsed = bcp47(locale);
  const invalid = () => commandError(ErrorCodes.BadValue, `Field 'locale' is invalid in: ${formatValue(raw)}`);
  if (!parsed) throw invalid();
  let supported: string[];
  try {
    supported = Intl.Collator.supportedLocalesOf([parsed.tag], { localeMatcher: "lookup" });
  } catch {
    throw invalid();
  }
  if (supported.length === 0) throw invalid();
  // A collation variant the locale does not have (e.g. "en@collation=phonebook") falls back silently in Intl.
  if (parsed.keyword && parsed.keyword !== "standard") {
    const resolved = new Intl.Collator(parsed.tag).resolvedOptions();
    if (!resolved.locale.includes(`-co-${parsed.keyword}`)) throw invalid();
  }
  return parsed;
}

const KNOWN_FIELDS = new Set([
  "locale",
  "caseLevel",
  "caseFirst",
  "strength",
  "numericOrdering",
  "alternate",
  "maxVariable",
  "normalization",
  "backwards",
  "version",
]);

const cache = new Map<string, Collation | null>();

/** Code point order (ICU's identical level compares the NFD forms this way). */
function compareCodePoints(a: string, b: string): number {
  const x = a.normalize("NFD");
  const y = b.normalize("NFD");
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const p = x.codePointAt(i)!;
    const q = y.codePointAt(i)!;
    if (p !== q) return p - q;
    if (p > 0xffff) i++;
  }
  return x.length - y.length;
}

function notSupported(what: string, raw: Document): never {
  throw commandError(ErrorCodes.BadValue, `${what} is not supported by the embedded server, in collation: ${formatValue(raw)}`);
}

function build(raw: Document): Collation | null {
  // mongod reads the locale first, then each option in this order, then looks for unknown fields.
  const locale = raw.locale;
  if (locale === undefined) throw commandError(ErrorCodes.NoSuchKey, 'Missing expected field "locale"');
  if (typeof locale !== "string") wrongType("locale", "string", locale);
  if (locale === "simple") {
    if (Object.keys(raw).length > 1) {
      throw commandError(ErrorCodes.FailedToParse, `If locale=simple, no other fields should be present in: ${formatValue(raw)}`);
    }
    return null;
  }
  const { tag } = validateLocale(locale, raw);
  const defaults = new Intl.Collator(tag).resolvedOptions();
  const caseLevel = boolField(raw, "caseLevel");
  const caseFirst = enumField(raw, "caseFirst", ["upper", "lower", "off"]);
  const strength = strengthField(raw);
  const numericOrdering = boolField(raw, "numericOrdering");
  const alternate = enumField(raw, "alternate", ["non-ignorable", "shifted"]);
  const maxVariable = enumField(raw, "maxVariable", ["punct", "space"]);
  const normalization = boolField(raw, "normalization");
  const backwards = boolField(raw, "backwards");
  const version = stringField(raw, "version");
  if (version !== undefined && version !== ICU_VERSION) {
    throw commandError(
      IncompatibleCollationVersion,
      `Requested collation version ${version} but the only available collator version was ${ICU_VERSION}. Requested collation spec: ${formatValue(raw)}`,
    );
  }
  if (Object.keys(raw).some((k) => !KNOWN_FIELDS.has(k))) {
    throw commandError(ErrorCodes.FailedToParse, `Collation spec contains unknown field. Collation spec: ${formatValue(raw)}`);
  }
  // The locale's own defaults (Thai ignores punctuation, Canadian French sorts accents backwards...).
  const localeBackwards = /^fr_CA(@|$)/.test(locale);
  const spec: Document = {
    locale,
    caseLevel: caseLevel ?? false,
    caseFirst: caseFirst ?? (defaults.caseFirst === "upper" || defaults.caseFirst === "lower" ? defaults.caseFirst : "off"),
    strength: strength ?? 3,
    numericOrdering: numericOrdering ?? defaults.numeric === true,
    alternate: alternate ?? (defaults.ignorePunctuation ? "shifted" : "non-ignorable"),
    maxVariable: maxVariable ?? "punct",
    normalization: normalization ?? false,
    backwards: backwards ?? localeBackwards,
    version: ICU_VERSION,
  };
  if (spec.backwards && spec.strength === 1) {
    throw commandError(ErrorCodes.BadValue, `'backwards' is invalid with 'strength' of 1 in: ${formatValue(spec)}`);
  }
  if (spec.caseFirst !== "off" && !spec.caseLevel && spec.strength <= 2) {
    throw commandError(
      ErrorCodes.BadValue,
      `'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: ${formatValue(spec)}`,
    );
  }
  // What Intl.Collator cannot express is refused, never approximated.
  if (spec.caseLevel && spec.strength > 1) notSupported("'caseLevel' with a 'strength' above 1", raw);
  if (spec.alternate === "shifted" && spec.maxVariable === "space") notSupported("'maxVariable' 'space' with 'alternate' 'shifted'", raw);
  if (spec.alternate === "shifted" && spec.strength === 4) notSupported("'strength' 4 with 'alternate' 'shifted'", raw);
  if (spec.backwards !== localeBackwards) notSupported(`'backwards' ${spec.backwards} for locale '${locale}'`, raw);
  const intl = new Intl.Collator(tag, {
    usage: "sort",
    sensitivity: spec.strength === 1 ? (spec.caseLevel ? "case" : "base") : spec.strength === 2 ? "accent" : "variant",
    numeric: spec.numericOrdering,
    caseFirst: spec.caseFirst === "off" ? "false" : spec.caseFirst,
    ignorePunctuation: spec.alternate === "shifted",
  });
  const tertiary = intl.compare;
  // Strength 4 without "shifted" has no quaternary weights: it is strength 3. Strength 5 breaks ties by code point.
  const compare: StringCompare = spec.strength === 5 ? (a, b) => tertiary(a, b) || compareCodePoints(a, b) : tertiary;
  return { spec, id: JSON.stringify(spec), compare };
}

/**
 * Parses a command's or index's `collation`: undefined when none was given, null for the simple (binary) one,
 * otherwise the collation. Throws mongod's error for an invalid document.
 */
export function parseCollation(raw: unknown, field = "collation"): Collation | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw) || (raw as { _bsontype?: string })._bsontype) {
    throw commandError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected type 'object'`);
  }
  let key: string;
  try {
    key = JSON.stringify(raw);
  } catch {
    return build(raw as Document);
  }
  let found = cache.get(key);
  if (found === undefined) {
    found = build(raw as Document);
    if (cache.size < 1000) cache.set(key, found);
  }
  return found;
}

/** The collation a command runs under: its own (`{locale: "simple"}` included), else the collection's default. */
export function effectiveCollation(raw: unknown, defaultCollation: Collation | undefined): Collation | undefined {
  const parsed = parseCollation(raw);
  if (parsed === undefined) return defaultCollation;
  return parsed ?? undefined;
}

export function sameCollation(a: Collation | undefined, b: Collation | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.id === b.id);
}
