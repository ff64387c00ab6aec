// Renders BSON values the way mongod prints them inside error messages (e.g. E11000 "dup key: { ... }").

export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (v instanceof RegExp) return `/${v.source}/${v.flags}`;
  if (Array.isArray(v)) return v.length ? `[ ${v.map(formatValue).join(", ")} ]` : "[]";
  const bsonType = (v as { _bsontype?: string })._bsontype;
  switch (bsonType) {
    case "ObjectId":
      return `ObjectId('${String((v as { toHexString(): string }).toHexString())}')`;
    case "Double": {
      // A double holding an integer prints with its fraction, as mongod prints doubles (5.0).
      const n = (v as { value: number }).value;
      return Number.isInteger(n) ? `${n}.0` : String(n);
    }
    case "Long":
    case "Int32":
    case "Decimal128":
      return String(v);
    case "Timestamp": {
      const t = v as { high: number; low: number };
      return `Timestamp(${t.high >>> 0}, ${t.low >>> 0})`;
    }
    case "Binary": {
      const b = v as { sub_type: number; toString(enc: string): string };
      return `BinData(${b.sub_type}, ${b.toString("hex").toUpperCase()})`;
    }
    case "MinKey":
      return "MinKey";
    case "MaxKey":
      return "MaxKey";
  }
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  return entries.length ? `{ ${entries.map(([k, x]) => `${k}: ${formatValue(x)}`).join(", ")} }` : "{}";
}
