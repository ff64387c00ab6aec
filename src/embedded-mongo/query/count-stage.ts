// A pipeline that ends by counting what its leading stages matched, as the driver's countDocuments sends it
// (`{$group: {_id: 1, n: {$sum: 1}}}`) or as `$count` says it: the count is the number of documents, so it is
// answered without running the aggregation over each of them (mongod's COUNT stage does the same).
import type { Document } from "bson";
import { isPlainObject } from "./bson-order.ts";

/** A name an output field may have: mongod refuses `$`-prefixed and dotted ones (the aggregation answers those). */
function isFieldName(name: unknown): name is string {
  return typeof name === "string" && name.length > 0 && !name.startsWith("$") && !name.includes(".");
}

/**
 * The one document the stages answer for `count` matched documents (none: no document), when `stages` is only a
 * count of them: `[{$group: {_id: <null or a number>, <name>: {$sum: 1}}}]` or `[{$count: <name>}]`. Undefined for
 * any other stages, which the aggregation runs.
 */
export function countingStage(stages: Document[]): ((count: number) => Document) | undefined {
  if (stages.length !== 1) return undefined;
  const stage = stages[0]!;
  const keys = Object.keys(stage);
  if (keys.length !== 1) return undefined;
  if (keys[0] === "$count") {
    const name = stage.$count;
    return isFieldName(name) ? (count) => ({ [name]: count }) : undefined;
  }
  if (keys[0] !== "$group" || !isPlainObject(stage.$group)) return undefined;
  const group = stage.$group;
  const fields = Object.keys(group);
  if (fields.length !== 2 || fields[0] !== "_id") return undefined;
  const id = group._id;
  if (id !== null && typeof id !== "number") return undefined;
  const name = fields[1];
  const accumulator = group[name!];
  if (!isFieldName(name) || !isPlainObject(accumulator) || Object.keys(accumulator).length !== 1 || accumulator.$sum !== 1) return undefined;
  return (count) => ({ _id: id, [name]: count });
}
