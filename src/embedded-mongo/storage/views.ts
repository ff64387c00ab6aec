// Read-only views (`create` with `viewOn` and `pipeline`): find, aggregate, count and distinct on a view run the
// view's pipeline over its source, as mongod does; writes and index commands on a view answer mongod's errors.
import type { Document } from "bson";
import type { Collection } from "./collection.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import type { Store } from "./store.ts";

// mongod's limit on views defined on views.
const MAX_VIEW_DEPTH = 20;

export function isView(coll: Collection | undefined): boolean {
  return coll !== undefined && typeof coll.options.viewOn === "string";
}

/** The backing collection name and the pipeline to prepend, following views on views; undefined for a collection. */
export function resolveView(store: Store, db: string, name: string): { source: string; pipeline: Document[] } | undefined {
  let coll = store.get(db, name);
  if (!isView(coll)) return undefined;
  const pipeline: Document[] = [];
  let source = name;
  for (let depth = 0; isView(coll); depth++) {
    if (depth >= MAX_VIEW_DEPTH)
      throw commandError(ErrorCodes.ViewDepthLimitExceeded, `View depth too deep or view cycle detected; maximum depth is ${MAX_VIEW_DEPTH}`);
    pipeline.unshift(...((coll!.options.pipeline as Document[] | undefined) ?? []));
    source = coll!.options.viewOn as string;
    coll = store.get(db, source);
  }
  return { source, pipeline };
}

/** Writes, index builds and other collection-only commands refuse a view (166 CommandNotSupportedOnView). */
export function refuseView(coll: Collection | undefined, ns: string): void {
  if (isView(coll)) throw commandError(ErrorCodes.CommandNotSupportedOnView, `Namespace ${ns} is a view, not a collection`);
}

/** Checks `create`'s view options as mongod does. */
export function validateViewOptions(options: Document): void {
  if (typeof options.viewOn !== "string")
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'create.viewOn' is the wrong type, expected type 'string'");
  if (options.viewOn === "") throw commandError(ErrorCodes.BadValue, "'viewOn' cannot be empty");
  if (options.pipeline !== undefined && !Array.isArray(options.pipeline)) {
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'create.pipeline' is the wrong type, expected type 'array'");
  }
  for (const stage of (options.pipeline as Document[] | undefined) ?? []) {
    const op = Object.keys(stage ?? {})[0];
    if (op === "$out" || op === "$merge") throw commandError(ErrorCodes.OptionNotSupportedOnView, `${op} cannot be used in a view definition`);
  }
  const unsupported = ["capped", "validator", "timeseries", "clusteredIndex", "changeStreamPreAndPostImages", "size", "max"].find(
    (k) => options[k] !== undefined,
  );
  if (unsupported) throw commandError(ErrorCodes.InvalidOptions, `Cannot specify '${unsupported}' for a view`);
}
