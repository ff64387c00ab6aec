// Pipeline-style updates (`u: [ {$set: ...}, ... ]`): the stages mongod allows run over the one document; a
// result without `_id` keeps the original one (mongod re-adds it), a different `_id` is an immutable-field error.
import type { Document } from "bson";
import { compareValues } from "./bson-order.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { RESHAPING_STAGES, runAggregation } from "./matcher.ts";
import { cloneDocument } from "../bson/clone.ts";
import { restoreNumbers } from "../bson/numbers.ts";
import type { Collation } from "./collation.ts";

const UPDATE_STAGES = new Set(["$addFields", "$set", "$project", "$unset", "$replaceRoot", "$replaceWith"]);

export function validatePipelineUpdate(pipeline: Document[]): void {
  for (const stage of pipeline) {
    if (stage === null || typeof stage !== "object" || Array.isArray(stage)) {
      throw commandError(ErrorCodes.TypeMismatch, "Each element of the 'pipeline' array must be an object");
    }
    const [name] = Object.keys(stage);
    if (name === undefined) throw commandError(40323, "A pipeline stage specification object must contain exactly one field.");
    if (!UPDATE_STAGES.has(name)) throw commandError(ErrorCodes.InvalidOptions, `${name} is not allowed to be used within an update`);
  }
}

/** The document after the pipeline, `_id` first; throws 66 when the pipeline changed `_id`. */
export function runPipelineUpdate(doc: Document, pipeline: Document[], variables?: Document, collation?: Collation): Document {
  validatePipelineUpdate(pipeline);
  const [computed] = runAggregation([cloneDocument(doc)], pipeline, () => [], variables, collation);
  if (!computed || typeof computed !== "object") throw commandError(ErrorCodes.BadValue, "The update pipeline did not produce a document");
  // Stages that rebuild the document with mingo's operators ($replaceWith) computed with plain numbers: the fields
  // they left as they were keep their stored types. The others gave them back already, their computed values as
  // computed.
  const rebuilt = pipeline.some((stage) => !RESHAPING_STAGES.has(Object.keys(stage)[0]!));
  const result = rebuilt ? (restoreNumbers(doc, computed) as Document) : computed;
  if (doc._id === undefined) return result;
  if (result._id === undefined) return { _id: doc._id, ...result };
  if (compareValues(result._id, doc._id) !== 0) {
    throw commandError(ErrorCodes.ImmutableField, "Performing an update on the path '_id' would modify the immutable field '_id'");
  }
  return result;
}
