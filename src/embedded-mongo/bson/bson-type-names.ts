// mongod's names of BSON types, as its error messages and $type spell them.

const BY_BSONTYPE: Record<string, string> = {
  ObjectId: "objectId",
  ObjectID: "objectId",
  Long: "long",
  Int32: "int",
  Double: "double",
  Decimal128: "decimal",
  Binary: "binData",
  Timestamp: "timestamp",
  BSONRegExp: "regex",
  BSONSymbol: "symbol",
  MinKey: "minKey",
  MaxKey: "maxKey",
};

/**
 * mongod's name of the BSON type of a decoded value. A JS number is "int" when the driver would send it as an
 * int32 (an integer within 32 bits, not -0), else "double".
 */
export function bsonTypeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  switch (typeof v) {
    case "string":
      return "string";
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 && !Object.is(v, -0) ? "int" : "double";
    case "bigint":
      return "long";
    case "object":
      break;
    default:
      return "undefined";
  }
  if (v instanceof Date) return "date";
  if (v instanceof RegExp) return "regex";
  if (v instanceof Uint8Array) return "binData";
  const t = (v as { _bsontype?: string })._bsontype;
  if (t === "Code") return (v as { scope?: unknown }).scope ? "javascriptWithScope" : "javascript";
  return (t && BY_BSONTYPE[t]) ?? "object";
}
