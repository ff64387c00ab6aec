// Atlas Search index management: createSearchIndexes, updateSearchIndex, dropSearchIndex, listSearchIndexes and
// the $listSearchIndexes stage. mongod 7.0 runs them only with a search index management host (Atlas); without one
// it parses the command and refuses it, which is what this server answers.
import type { Document } from "bson";
import type { CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { collectionName } from "./common.ts";

/** mongod's command parser's code for a missing required field (codeName Location40414). */
const MISSING_REQUIRED_FIELD = 40414;

/**
 * mongod 7.0's answer to a search index command when no search index management host is configured
 * (`throwIfNotRunningWithRemoteSearchIndexManagement`): 115 CommandNotSupported. It is raised after the command is
 * parsed and before the collection is looked up, so a missing collection does not change it.
 */
function notAtlas(): never {
  throw commandError(ErrorCodes.CommandNotSupported, "Search index commands are only supported with Atlas.");
}

function requireArray(cmd: Document, field: string): void {
  const name = Object.keys(cmd)[0];
  const v = cmd[field];
  if (v === undefined) throw commandError(MISSING_REQUIRED_FIELD, `BSON field '${name}.${field}' is missing but a required field`);
  if (!Array.isArray(v)) {
    const actual = v === null ? "null" : typeof v === "object" ? "object" : typeof v;
    throw commandError(ErrorCodes.TypeMismatch, `BSON field '${name}.${field}' is the wrong type '${actual}', expected type 'array'`);
  }
}

export const searchIndexCommands: Record<string, CommandHandler> = {
  createSearchIndexes: (cmd) => {
    collectionName(cmd, "createSearchIndexes");
    requireArray(cmd, "indexes");
    return notAtlas();
  },
  updateSearchIndex: (cmd) => {
    collectionName(cmd, "updateSearchIndex");
    return notAtlas();
  },
  dropSearchIndex: (cmd) => {
    collectionName(cmd, "dropSearchIndex");
    return notAtlas();
  },
  listSearchIndexes: (cmd) => {
    collectionName(cmd, "listSearchIndexes");
    return notAtlas();
  },
};

/**
 * The $listSearchIndexes aggregation stage: mongod 7.0 without Atlas Search refuses it when the pipeline is parsed,
 * with 6047401 (codeName Location6047401).
 */
export function refuseListSearchIndexesStage(): never {
  throw commandError(6047401, "$listSearchIndexes stage is only allowed on MongoDB Atlas");
}
