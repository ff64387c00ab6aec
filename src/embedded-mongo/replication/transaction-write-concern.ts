// The write concern of commitTransaction on this one-member replica set: `w` of 1 or "majority" is met by the
// commit itself; more members than the set has, or a tag mode it does not define, answer the writeConcernError
// mongod gives (the commit itself stands).
import type { Document } from "bson";

export function commitWriteConcernError(writeConcern: unknown): Document | undefined {
  const w = (writeConcern as Document | undefined)?.w;
  if (typeof w === "number" && w > 1) {
    return { code: 100, codeName: "UnsatisfiableWriteConcern", errmsg: "Not enough data-bearing nodes" };
  }
  if (typeof w === "string" && w !== "majority") {
    return { code: 79, codeName: "UnknownReplWriteConcern", errmsg: `No write concern mode named '${w}' found in replica set configuration` };
  }
  return undefined;
}
