// Write commands: insert, update, delete, findAndModify. Each statement runs synchronously start to finish (atomic);
// a long insert, update or delete may be run in passes by its connection (server/statement-passes.ts).
import type { Document } from "bson";
import { parseSort } from "../query/bson-order.ts";
import type { CommandHandler } from "./context.ts";
import { CommandError, commandError, ErrorCodes } from "../bson/errors.ts";
import { findMatches } from "../storage/planner.ts";
import { applyUpdate, buildUpsertDocument, isOperatorUpdate, validateUpdate, withIdFirst } from "../query/update.ts";
import { checkReadConcern } from "./command-options.ts";
import { effectiveCollation } from "../query/collation.ts";
import { letVariables } from "../query/matcher.ts";
import { refuseView } from "../storage/views.ts";
import { refuseTimeseriesWrite } from "../storage/collection-options.ts";
import { validateDocument } from "../query/validation.ts";
import { collectionName, ns, optionalDocument, projector } from "./common.ts";
import { currentStatementLog, type StatementOutcome } from "../replication/sessions.ts";

function statements(cmd: Document, field: string): Document[] {
  const list = cmd[field];
  if (!Array.isArray(list))
    throw commandError(ErrorCodes.FailedToParse, `BSON field '${Object.keys(cmd)[0]}.${field}' is missing but a required field`);
  return list as Document[];
}

/** A whole-document replacement (a "replace" change event) rather than an operator or pipeline update. */
function isReplacement(update: Document | Document[]): boolean {
  return !Array.isArray(update) && !isOperatorUpdate(update);
}

function validateId(doc: Document): void {
  const id = doc._id;
  if (Array.isArray(id)) throw commandError(ErrorCodes.BadValue, "The '_id' value cannot be of type array");
  if (id instanceof RegExp) throw commandError(ErrorCodes.BadValue, "can't use a regex for _id");
  if (id !== null && typeof id === "object" && !(id as { _bsontype?: string })._bsontype && !(id instanceof Date)) {
    const dollar = Object.keys(id).find((k) => k.startsWith("$"));
    if (dollar)
      throw commandError(ErrorCodes.DollarPrefixedFieldName, `_id fields may not contain '$'-prefixed fields: ${dollar} is not valid for storage.`);
  }
}

/**
 * Runs each statement, collecting per-statement errors the way mongod reports them in `writeErrors`. In a
 * retryable write, or a command run in passes, each statement's outcome (`tally` before and after it) is recorded,
 * and statements that ran in an earlier attempt or pass are skipped (sessions.ts, StatementLog).
 */
function runStatements(list: Document[], ordered: boolean, tally: () => StatementOutcome, run: (stmt: Document, index: number) => void): Document[] {
  const writeErrors: Document[] = [];
  const log = currentStatementLog();
  for (let i = log?.firstIndex ?? 0; i < list.length; i++) {
    if (log?.ran(i)) continue;
    // A command run in passes stops here once this pass has run its share; the next pass goes on from here.
    if (log && !log.mayRun(i)) break;
    const before = tally();
    const upsertedBefore = before.upserted?.length ?? 0;
    try {
      log?.beforeRun();
      run(list[i]!, i);
      const after = tally();
      log?.record(i, {
        n: after.n - before.n,
        nModified: (after.nModified ?? 0) - (before.nModified ?? 0),
        upserted: after.upserted?.slice(upsertedBefore),
      });
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      writeErrors.push(err.toWriteError(i));
      if (ordered) break;
    }
    if (log?.interrupted) break;
  }
  return writeErrors;
}

function withWriteErrors(reply: Document, writeErrors: Document[]): Document {
  if (writeErrors.length) reply.writeErrors = writeErrors;
  return reply;
}

export const crudCommands: Record<string, CommandHandler> = {
  insert: (cmd, ctx) => {
    const name = collectionName(cmd, "insert");
    checkReadConcern(cmd, ctx);
    const docs = statements(cmd, "documents");
    refuseView(ctx.server.store.get(ctx.db, name), ns(ctx, name));
    const coll = ctx.server.store.ensure(ctx.db, name);
    let n = 0;
    const writeErrors = runStatements(
      docs,
      cmd.ordered !== false,
      () => ({ n }),
      (doc) => {
        const stored = withIdFirst(doc);
        validateId(stored);
        validateDocument(coll, stored, undefined, cmd.bypassDocumentValidation);
        coll.insert(stored);
        n++;
      },
    );
    return withWriteErrors({ n, ok: 1 }, writeErrors);
  },

  update: (cmd, ctx) => {
    const name = collectionName(cmd, "update");
    checkReadConcern(cmd, ctx);
    const updates = statements(cmd, "updates");
    const store = ctx.server.store;
    refuseView(store.get(ctx.db, name), ns(ctx, name));
    refuseTimeseriesWrite(store.get(ctx.db, name), "update");
    const variables = letVariables(cmd.let);
    // An update statement's `sort` arrived in 8.0; the 7.0 this server reports rejects the whole command.
    if (updates.some((u) => u && u.sort !== undefined)) throw commandError(40415, "BSON field 'update.updates.sort' is an unknown field.");
    let n = 0;
    let nModified = 0;
    const upserted: Document[] = [];
    const writeErrors = runStatements(
      updates,
      cmd.ordered !== false,
      () => ({ n, nModified, upserted }),
      (stmt, index) => {
        const query = (stmt.q ?? {}) as Document;
        const update = stmt.u as Document | Document[];
        validateUpdate(update);
        const coll = store.get(ctx.db, name);
        const collation = effectiveCollation(stmt.collation, coll?.collation);
        const multi = stmt.multi === true;
        if (multi && !Array.isArray(update) && !isOperatorUpdate(update)) {
          throw commandError(ErrorCodes.FailedToParse, "multi update is not supported for replacement-style update");
        }
        const arrayFilters = stmt.arrayFilters as Document[] | undefined;
        const matches = coll ? findMatches(coll, query, { limit: multi ? 0 : 1, hint: stmt.hint, variables, collation }) : [];
        if (matches.length === 0) {
          if (stmt.upsert !== true) return;
          const doc = buildUpsertDocument(query, update, arrayFilters, variables);
          validateId(doc);
          validateDocument(coll, doc, undefined, cmd.bypassDocumentValidation);
          store.ensure(ctx.db, name).insert(doc);
          n++;
          upserted.push({ index, _id: doc._id });
          return;
        }
        for (const [rid, doc] of matches) {
          const result = applyUpdate(doc, update, { arrayFilters, query, variables, collation });
          if (result.modified) validateDocument(coll, result.doc, doc, cmd.bypassDocumentValidation);
          if (result.modified) coll!.replace(rid, result.doc, isReplacement(update));
          n++;
          if (result.modified) nModified++;
        }
      },
    );
    const reply: Document = { n, nModified };
    if (upserted.length) reply.upserted = upserted;
    reply.ok = 1;
    return withWriteErrors(reply, writeErrors);
  },

  delete: (cmd, ctx) => {
    const name = collectionName(cmd, "delete");
    checkReadConcern(cmd, ctx);
    const deletes = statements(cmd, "deletes");
    const coll = ctx.server.store.get(ctx.db, name);
    refuseView(coll, ns(ctx, name));
    const variables = letVariables(cmd.let);
    let n = 0;
    const writeErrors = runStatements(
      deletes,
      cmd.ordered !== false,
      () => ({ n }),
      (stmt) => {
        const collation = effectiveCollation(stmt.collation, coll?.collation);
        if (!coll) return;
        const limit = Number(stmt.limit ?? 0);
        if (limit !== 0 && limit !== 1)
          throw commandError(ErrorCodes.FailedToParse, `The limit field in delete objects must be 0 or 1. Got ${limit}`);
        for (const [rid] of findMatches(coll, (stmt.q ?? {}) as Document, { limit, hint: stmt.hint, variables, collation })) {
          if (coll.remove(rid)) n++;
        }
      },
    );
    return withWriteErrors({ n, ok: 1 }, writeErrors);
  },

  findAndModify: (cmd, ctx) => {
    const name = collectionName(cmd, "findAndModify");
    checkReadConcern(cmd, ctx);
    const query = optionalDocument(cmd, "query") ?? {};
    const sort = parseSort(cmd.sort);
    const remove = cmd.remove === true;
    const update = cmd.update as Document | Document[] | undefined;
    const upsert = cmd.upsert === true;
    const returnNew = cmd.new === true;
    if (remove && update !== undefined) throw commandError(ErrorCodes.FailedToParse, "Cannot specify both an update and remove=true");
    if (remove && upsert) throw commandError(ErrorCodes.FailedToParse, "Cannot specify both upsert=true and remove=true");
    if (!remove && update === undefined) throw commandError(ErrorCodes.FailedToParse, "Either an update or remove=true must be specified");
    if (remove && returnNew)
      throw commandError(ErrorCodes.FailedToParse, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document");
    if (update !== undefined) validateUpdate(update);
    const variables = letVariables(cmd.let);
    const arrayFilters = cmd.arrayFilters as Document[] | undefined;
    const store = ctx.server.store;
    const coll = store.get(ctx.db, name);
    const collation = effectiveCollation(cmd.collation, coll?.collation);
    const project = projector(optionalDocument(cmd, "fields"), query, collation);
    const shape = (doc: Document | null) => (doc && project ? project(doc) : doc);
    refuseView(coll, ns(ctx, name));
    refuseTimeseriesWrite(coll, "findAndModify");
    const [match] = coll ? findMatches(coll, query, { sort, limit: 1, hint: cmd.hint, variables, collation }) : [];

    if (remove) {
      if (!match) return { lastErrorObject: { n: 0 }, value: null, ok: 1 };
      coll!.remove(match[0]);
      return { lastErrorObject: { n: 1 }, value: shape(match[1]), ok: 1 };
    }
    if (match) {
      const [rid, before] = match;
      const result = applyUpdate(before, update!, { arrayFilters, query, variables, collation });
      if (result.modified) validateDocument(coll, result.doc, before, cmd.bypassDocumentValidation);
      if (result.modified) coll!.replace(rid, result.doc, isReplacement(update!));
      return { lastErrorObject: { n: 1, updatedExisting: true }, value: shape(returnNew ? result.doc : before), ok: 1 };
    }
    if (!upsert) return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 };
    const doc = buildUpsertDocument(query, update!, arrayFilters, variables);
    validateId(doc);
    validateDocument(coll, doc, undefined, cmd.bypassDocumentValidation);
    store.ensure(ctx.db, name).insert(doc);
    return {
      lastErrorObject: { n: 1, updatedExisting: false, upserted: doc._id },
      value: returnNew ? shape(doc) : null,
      ok: 1,
    };
  },
};
