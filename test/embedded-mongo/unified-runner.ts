// A runner for the MongoDB drivers' unified test format (the JSON files under spec-tests/), driving the official
// Node.js driver against one embedded server. It implements the entities, operations, matching rules and special
// operators these files use; what it does not implement makes a test "skipped" with the reason.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { EJSON } from "bson";
import {
  MongoClient,
  MongoServerError,
  type AbstractCursor,
  type ChangeStream,
  type ClientSession,
  type Collection,
  type CommandStartedEvent,
  type Db,
  type Document,
} from "mongodb";
import { checkClientEvents, countMatching, observeClient, type ClientEntity, type MatchFn } from "./unified-events.ts";
import { bucketOperation, createBucket, isBucket } from "./unified-gridfs.ts";
import {
  clientBulkWrite,
  clientBulkWriteErrors,
  commandCursorOperation,
  isClientBulkWriteResult,
  normalizeClientBulkWriteResult,
  searchIndexOperation,
} from "./unified-operations.ts";

export interface SpecFile {
  area: string;
  file: string;
  json: Document;
}

export interface ServerInfo {
  uri: string;
  version: number[];
  topology: "single" | "replicaset";
}

export type Outcome =
  | { status: "passed" }
  | { status: "failed"; reason: string }
  | { status: "skipped"; reason: string }
  | { status: "notApplicable"; reason: string };

/** A test the runner cannot run (an unsupported operation or entity); reported as skipped with the reason. */
export class SkipTest extends Error {}

export function loadSpecFiles(root: string): SpecFile[] {
  const out: SpecFile[] = [];
  for (const area of readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()) {
    for (const file of readdirSync(path.join(root, area))
      .filter((f) => f.endsWith(".json"))
      .sort()) {
      // relaxed: false keeps Int32/Long/Double wrappers, so $$type and number types stay visible.
      out.push({ area, file, json: EJSON.parse(readFileSync(path.join(root, area, file), "utf8"), { relaxed: false }) as Document });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Applicability

function parseVersion(v: string): number[] {
  return v.split(".").map(Number);
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

/** Why no requirement of the list is met, or undefined when one is (or there are none). */
export function unmetRequirements(list: Document[] | undefined, server: ServerInfo): string | undefined {
  if (!list || list.length === 0) return undefined;
  const reasons: string[] = [];
  for (const req of list) {
    const why = unmet(req, server);
    if (!why) return undefined;
    reasons.push(why);
  }
  return reasons.join("; ");
}

function unmet(req: Document, server: ServerInfo): string | undefined {
  if (req.minServerVersion && compareVersions(server.version, parseVersion(req.minServerVersion)) < 0)
    return `needs server >= ${req.minServerVersion}`;
  if (req.maxServerVersion && compareVersions(server.version, parseVersion(req.maxServerVersion)) > 0)
    return `needs server <= ${req.maxServerVersion}`;
  if (req.topologies && !(req.topologies as string[]).includes(server.topology)) return `needs topology ${(req.topologies as string[]).join("/")}`;
  if (req.serverless === "require") return "needs serverless";
  if (req.auth === true) return "needs auth";
  if (req.authMechanism) return "needs an auth mechanism";
  if (req.csfle) return "needs client-side encryption";
  if (req.serverParameters) return "needs server parameters";
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Matching (the unified format's "Evaluating Matches" rules and special operators)

type Entities = Map<string, unknown>;

function bsonType(v: unknown): string | undefined {
  return (v as { _bsontype?: string } | null)?._bsontype;
}

function isNumber(v: unknown): boolean {
  const t = bsonType(v);
  return typeof v === "number" || typeof v === "bigint" || t === "Int32" || t === "Long" || t === "Double" || t === "Decimal128";
}

function toNumber(v: unknown): number {
  return typeof v === "number" ? v : Number(String(v));
}

function isDocument(v: unknown): v is Document {
  if (v === null || typeof v !== "object" || Array.isArray(v) || v instanceof Date || bsonType(v)) return false;
  return !(v instanceof Uint8Array);
}

/** The BSON type names a value may be asserted with in $$type ("number" is any numeric type). */
function typeNames(v: unknown): string[] {
  if (v === undefined) return [];
  if (v === null) return ["null"];
  if (typeof v === "string") return ["string"];
  if (typeof v === "boolean") return ["bool"];
  // The driver decodes int32, int64 and double to JS numbers: any numeric alias matches an actual number.
  if (typeof v === "number") return ["number", "int", "long", "double", ...(Number.isInteger(v) ? [] : [])];
  if (v instanceof Date) return ["date"];
  if (Array.isArray(v)) return ["array"];
  switch (bsonType(v)) {
    case "Int32":
      return ["int", "number"];
    case "Long":
      return ["long", "number"];
    case "Double":
      return ["double", "number"];
    case "Decimal128":
      return ["decimal", "number"];
    case "ObjectId":
      return ["objectId"];
    case "Binary":
      return ["binData"];
    case "Timestamp":
      return ["timestamp"];
    case "BSONRegExp":
      return ["regex"];
    case "MinKey":
      return ["minKey"];
    case "MaxKey":
      return ["maxKey"];
    case "Code":
      return ["javascript"];
    default:
      return v instanceof RegExp ? ["regex"] : ["object"];
  }
}

export class Matcher {
  constructor(private readonly entities: Entities) {}

  /** Throws with a path-qualified message when `actual` does not match `expected`. */
  match(expected: unknown, actual: unknown, root = true, where = ""): void {
    // The driver sends some fields (sort, hint) as Maps.
    if (actual instanceof Map) actual = Object.fromEntries(actual);
    if (isDocument(expected)) {
      const keys = Object.keys(expected);
      const [first] = keys;
      if (keys.length === 1 && first?.startsWith("$$")) {
        this.operator(first, expected[first], actual, root, where);
        return;
      }
      if (!isDocument(actual)) throw new Error(`${where || "root"}: expected a document, got ${show(actual)}`);
      for (const key of keys) {
        const exp = expected[key];
        const act = actual[key];
        if (isDocument(exp) && Object.keys(exp)[0] === "$$exists") {
          if ((act !== undefined) !== exp.$$exists) throw new Error(`${where}.${key}: expected ${exp.$$exists ? "present" : "absent"}`);
          continue;
        }
        if (isDocument(exp) && Object.keys(exp)[0] === "$$unsetOrMatches" && act === undefined) continue;
        if (act === undefined && !(key in actual)) throw new Error(`${where}.${key}: missing (expected ${show(exp)})`);
        this.match(exp, act, false, `${where}.${key}`);
      }
      if (!root) {
        const extra = Object.keys(actual).filter((k) => !(k in expected));
        if (extra.length) throw new Error(`${where || "root"}: unexpected fields ${extra.join(", ")}`);
      }
      return;
    }
    if (Array.isArray(expected)) {
      if (!Array.isArray(actual)) throw new Error(`${where || "root"}: expected an array, got ${show(actual)}`);
      if (actual.length !== expected.length)
        throw new Error(`${where || "root"}: expected ${expected.length} elements, got ${actual.length}: ${show(actual)}`);
      // The documents of a root-level array (a find's results) are root documents themselves.
      expected.forEach((e, i) => this.match(e, actual[i], root, `${where}[${i}]`));
      return;
    }
    if (isNumber(expected)) {
      if (!isNumber(actual) || toNumber(expected) !== toNumber(actual))
        throw new Error(`${where || "root"}: expected ${show(expected)}, got ${show(actual)}`);
      return;
    }
    if (!sameScalar(expected, actual)) throw new Error(`${where || "root"}: expected ${show(expected)}, got ${show(actual)}`);
  }

  private operator(op: string, arg: unknown, actual: unknown, root: boolean, where: string): void {
    switch (op) {
      case "$$exists":
        if ((actual !== undefined) !== arg) throw new Error(`${where}: expected ${arg ? "present" : "absent"}`);
        return;
      case "$$type": {
        const wanted = Array.isArray(arg) ? (arg as string[]) : [arg as string];
        const names = typeNames(actual);
        if (!wanted.some((w) => names.includes(w))) throw new Error(`${where}: expected type ${wanted.join("|")}, got ${show(actual)}`);
        return;
      }
      case "$$unsetOrMatches":
        if (actual === undefined) return;
        this.match(arg, actual, root, where);
        return;
      case "$$matchesEntity":
        this.match(this.entity(arg as string), actual, root, where);
        return;
      case "$$matchesHexBytes": {
        // A Buffer's own bytes (its .buffer may be a larger shared pool), else a BSON Binary's.
        const bytes = actual instanceof Uint8Array ? actual : ((actual as { buffer?: Uint8Array } | undefined)?.buffer ?? new Uint8Array());
        const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
        if (hex.toLowerCase() !== String(arg).toLowerCase()) throw new Error(`${where}: bytes differ`);
        return;
      }
      case "$$sessionLsid": {
        const session = this.entity(arg as string) as ClientSession;
        this.match(session.id, actual, false, where);
        return;
      }
      case "$$lte":
        if (!isNumber(actual) || toNumber(actual) > toNumber(arg)) throw new Error(`${where}: expected <= ${show(arg)}, got ${show(actual)}`);
        return;
      case "$$matchAsDocument": {
        if (typeof actual !== "string") throw new Error(`${where}: expected a JSON string`);
        this.match(arg, EJSON.parse(actual, { relaxed: false }), false, where);
        return;
      }
      case "$$matchAsRoot":
        this.match(arg, actual, true, where);
        return;
      default:
        throw new SkipTest(`unsupported match operator ${op}`);
    }
  }

  private entity(id: string): unknown {
    if (!this.entities.has(id)) throw new Error(`no entity ${id}`);
    return this.entities.get(id);
  }
}

function sameScalar(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  return EJSON.stringify(a as Document, { relaxed: false }) === EJSON.stringify(b as Document, { relaxed: false });
}

function show(v: unknown): string {
  try {
    return v === undefined ? "undefined" : EJSON.stringify(v as Document, { relaxed: true }).slice(0, 300);
  } catch {
    return String(v);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Entities and operations

/** Turns expected-data wrappers (Int32, Double) into what the driver sends and decodes. */
function plain<T>(v: T): T {
  return EJSON.deserialize(EJSON.serialize(v as Document, { relaxed: false }), { relaxed: true }) as T;
}

export class TestContext {
  readonly entities: Entities = new Map();
  readonly clients = new Map<string, ClientEntity>();
  readonly matcher = new Matcher(this.entities);
  private readonly toClose: { close(): Promise<unknown> | unknown }[] = [];

  constructor(
    readonly server: ServerInfo,
    readonly setup: MongoClient,
  ) {}

  async close(): Promise<void> {
    for (const c of this.toClose.reverse()) await Promise.resolve(c.close()).catch(() => undefined);
  }

  async createEntities(list: Document[]): Promise<void> {
    for (const item of list) {
      const [kind, spec] = Object.entries(item)[0] as [string, Document];
      const id = spec.id as string;
      switch (kind) {
        case "client": {
          const uriOptions = { ...(spec.uriOptions ?? {}) } as Document;
          if (uriOptions.appname) {
            uriOptions.appName = uriOptions.appname;
            delete uriOptions.appname;
          }
          // A short minimum heartbeat interval: after a state-change error the driver rechecks the server before
          // retrying, by default no sooner than 500 ms, which would dominate the suite's time.
          // __skipPingOnConnect (as the driver's own runner): connect() would otherwise check a connection out and in,
          // pool events the test did not cause.
          const options: Document = {
            minHeartbeatFrequencyMS: 20,
            ...plain(uriOptions),
            monitorCommands: true,
            serverSelectionTimeoutMS: 5000,
            __skipPingOnConnect: true,
          };
          if (spec.serverApi) options.serverApi = spec.serverApi;
          if (spec.storeEventsAsEntities || spec.observeLogMessages || spec.autoEncryptOpts)
            throw new SkipTest(
              `client option ${spec.storeEventsAsEntities ? "storeEventsAsEntities" : spec.observeLogMessages ? "observeLogMessages" : "autoEncryptOpts"}`,
            );
          const client = new MongoClient(this.server.uri, options);
          const entity = observeClient(client, spec);
          await client.connect();
          this.clients.set(id, entity);
          this.entities.set(id, client);
          this.toClose.push(client);
          break;
        }
        case "database": {
          const client = this.entities.get(spec.client) as MongoClient;
          this.entities.set(id, client.db(spec.databaseName, plain(spec.databaseOptions ?? {})));
          break;
        }
        case "collection": {
          const db = this.entities.get(spec.database) as Db;
          this.entities.set(id, db.collection(spec.collectionName, plain(spec.collectionOptions ?? {})));
          break;
        }
        case "bucket": {
          const db = this.entities.get(spec.database) as Db;
          this.entities.set(id, createBucket(db, plain(spec.bucketOptions)));
          break;
        }
        case "session": {
          const client = this.entities.get(spec.client) as MongoClient;
          const { snapshotTime, ...options } = (spec.sessionOptions ?? {}) as Document;
          const session = client.startSession(plain(options));
          // A snapshot session pinned to a saved time (an entity holding a getSnapshotTime result).
          if (snapshotTime !== undefined) (session as unknown as { snapshotTime: unknown }).snapshotTime = this.entities.get(snapshotTime);
          this.entities.set(id, session);
          this.toClose.unshift({ close: () => session.endSession() });
          break;
        }
        default:
          throw new SkipTest(`entity type ${kind}`);
      }
    }
  }

  async initialData(list: Document[] | undefined): Promise<void> {
    for (const data of list ?? []) {
      const db = this.setup.db(data.databaseName);
      await db
        .collection(data.collectionName)
        .drop({ writeConcern: { w: "majority" } })
        .catch(() => undefined);
      if (data.createOptions || (data.documents as Document[]).length === 0) {
        await db.createCollection(data.collectionName, { ...plain(data.createOptions ?? {}), writeConcern: { w: "majority" } });
      }
      if ((data.documents as Document[]).length) {
        await db.collection(data.collectionName).insertMany(plain(data.documents) as Document[], { writeConcern: { w: "majority" } });
      }
    }
  }

  /** Runs one operation, checking its expectResult / expectError. */
  /**
   * `passErrors` (the operations of a withTransaction callback): an error, once checked against what the operation
   * expects, is thrown on as it came, so the driver's withTransaction sees it (its labels decide a retry).
   */
  async runOperation(op: Document, passErrors = false): Promise<void> {
    let result: unknown;
    let error: unknown;
    try {
      result = await this.execute(op);
    } catch (err) {
      if (err instanceof SkipTest) throw err;
      error = err;
    }
    const passOn = () => {
      if (passErrors && error !== undefined) throw error;
    };
    if (op.ignoreResultAndError) return passOn();
    if (op.expectError) {
      if (error === undefined) throw new Error(`${op.name}: expected an error, got result ${show(result)}`);
      this.checkError(op.expectError as Document, error);
      return passOn();
    }
    passOn();
    if (error !== undefined) throw new Error(`${op.name}: unexpected error: ${(error as Error).message}`);
    if (op.expectResult !== undefined) {
      try {
        this.matcher.match(op.expectResult, normalizeResult(result), true, "");
      } catch (err) {
        throw new Error(`${op.name}: result mismatch: ${(err as Error).message}; actual ${show(normalizeResult(result))}`);
      }
    }
    if (op.saveResultAsEntity) this.entities.set(op.saveResultAsEntity, result);
  }

  private checkError(expect: Document, error: unknown): void {
    const err = error as MongoServerError;
    const fromServer = (error as object) instanceof MongoServerError;
    if (expect.isClientError === true && fromServer) throw new Error(`expected a client error, got server error ${err.message}`);
    if (expect.isClientError === false && !fromServer)
      throw new Error(`expected a server error, got ${(error as Error)?.name}: ${(error as Error)?.message}`);
    if (expect.isTimeoutError !== undefined) throw new SkipTest("isTimeoutError (CSOT)");
    if (expect.errorContains && !String(err?.message).toLowerCase().includes(String(expect.errorContains).toLowerCase())) {
      throw new Error(`error "${err?.message}" does not contain "${expect.errorContains}"`);
    }
    if (expect.errorCode !== undefined && err?.code !== toNumber(expect.errorCode))
      throw new Error(`expected error code ${expect.errorCode}, got ${err?.code} (${err?.message})`);
    if (expect.errorCodeName !== undefined && err?.codeName !== expect.errorCodeName)
      throw new Error(`expected codeName ${expect.errorCodeName}, got ${err?.codeName} (${err?.message})`);
    for (const label of (expect.errorLabelsContain as string[]) ?? []) {
      if (!err?.hasErrorLabel?.(label)) throw new Error(`expected error label ${label}, labels: ${show(err?.errorLabels)}`);
    }
    for (const label of (expect.errorLabelsOmit as string[]) ?? []) {
      if (err?.hasErrorLabel?.(label)) throw new Error(`unexpected error label ${label}`);
    }
    if (expect.errorResponse !== undefined) this.matcher.match(expect.errorResponse, err?.errorResponse ?? err, true, "errorResponse");
    if (expect.expectResult !== undefined) {
      const partial = (err as { result?: unknown; partialResult?: unknown }).partialResult ?? (err as { result?: unknown }).result;
      this.matcher.match(expect.expectResult, normalizeResult(partial), true, "partialResult");
    }
    // A client bulkWrite's errors: exactly these write errors (keyed by model index) and write concern errors, each
    // matched as a root-level document.
    if (expect.writeErrors !== undefined) {
      const actual = clientBulkWriteErrors(err) ?? {};
      const keys = (d: Document) => Object.keys(d).sort().join(",");
      if (keys(actual) !== keys(expect.writeErrors)) throw new Error(`write errors at [${keys(actual)}], expected [${keys(expect.writeErrors)}]`);
      for (const i of Object.keys(expect.writeErrors)) this.matcher.match(expect.writeErrors[i], actual[i], true, `writeErrors.${i}`);
    }
    if (expect.writeConcernErrors !== undefined) {
      const actual = (err as { writeConcernErrors?: unknown }).writeConcernErrors ?? [];
      this.matcher.match(expect.writeConcernErrors, actual, true, "writeConcernErrors");
    }
  }

  private session(args: Document): ClientSession | undefined {
    return args.session ? (this.entities.get(args.session) as ClientSession) : undefined;
  }

  private async execute(op: Document): Promise<unknown> {
    const args = { ...(op.arguments ?? {}) } as Document;
    const name = op.name as string;
    if (op.object === "testRunner") return this.testRunnerOperation(name, args);
    const session = this.session(args);
    delete args.session;
    const target = this.entities.get(op.object);
    if (target === undefined) throw new Error(`no entity ${op.object}`);
    const opts = (extra: Document = {}) => ({ ...plain(extra), ...(session ? { session } : {}) });
    if (args.timeoutMS !== undefined) throw new SkipTest("timeoutMS (CSOT)");

    if (name === "iterateUntilDocumentOrError" || name === "iterateOnce") {
      const cursor = target as { next(): Promise<unknown>; tryNext?(): Promise<unknown> };
      if (name === "iterateOnce") return cursor.tryNext ? cursor.tryNext() : cursor.next();
      return cursor.next();
    }
    if (name === "close") return (target as { close(): Promise<void> }).close();

    if (target instanceof MongoClient) {
      switch (name) {
        case "listDatabases":
          return (await target.db("admin").admin().listDatabases(opts(args))).databases;
        case "listDatabaseNames":
          return (
            await target
              .db("admin")
              .admin()
              .listDatabases({ ...opts(args), nameOnly: true })
          ).databases.map((d) => d.name);
        case "createChangeStream":
          return this.changeStream(target.watch(plain(args.pipeline ?? []), opts(omit(args, "pipeline"))));
        case "clientBulkWrite":
          return clientBulkWrite(target, plain(args), opts(omit(args, "models")));
        default:
          throw new SkipTest(`client operation ${name}`);
      }
    }
    if (isDb(target)) {
      const db = target;
      switch (name) {
        case "runCommand": {
          const command = plain(args.command);
          return db.command(command, opts(omit(args, "command", "commandName")));
        }
        case "aggregate":
          return db.aggregate(plain(args.pipeline), opts(omit(args, "pipeline"))).toArray();
        case "createCollection":
          return db.createCollection(args.collection, opts(omit(args, "collection"))).then(() => undefined);
        case "dropCollection":
          return db.dropCollection(args.collection, opts(omit(args, "collection")));
        case "listCollections":
          return db.listCollections(plain(args.filter ?? {}), opts(omit(args, "filter"))).toArray();
        case "listCollectionNames":
          return (await db.listCollections(plain(args.filter ?? {}), { ...opts(omit(args, "filter")), nameOnly: true }).toArray()).map((c) => c.name);
        case "createChangeStream":
          return this.changeStream(db.watch(plain(args.pipeline ?? []), opts(omit(args, "pipeline"))));
        case "modifyCollection":
          return db.command({ collMod: args.collection, ...plain(omit(args, "collection")) }, opts());
        case "runCursorCommand":
          return commandCursorOperation(db, name, plain(args), session);
        case "createCommandCursor": {
          const cursor = (await commandCursorOperation(db, name, plain(args), session)) as AbstractCursor;
          this.toClose.push(cursor);
          return cursor;
        }
        default:
          throw new SkipTest(`database operation ${name}`);
      }
    }
    if (isBucket(target)) {
      const done = await bucketOperation(target, name, plain(args));
      if (!done) throw new SkipTest(`bucket operation ${name}`);
      return done.result;
    }
    if (isCollection(target)) {
      const search = await searchIndexOperation(target, name, plain(args));
      return search ? search.result : this.collectionOperation(target, name, args, opts);
    }
    if (isSession(target)) {
      switch (name) {
        case "endSession":
          return target.endSession();
        case "getSnapshotTime":
          return (target as unknown as { snapshotTime?: unknown }).snapshotTime;
        case "startTransaction":
          return target.startTransaction(plain(args.options ?? args));
        case "commitTransaction":
          return target.commitTransaction();
        case "abortTransaction":
          return target.abortTransaction();
        case "withTransaction":
          // The callback's operations run as the test's own; an error none of them expects reaches the driver as
          // it came (its labels decide whether withTransaction retries).
          return target.withTransaction(
            async () => {
              for (const callbackOp of args.callback as Document[]) await this.runOperation(callbackOp, true);
            },
            plain(omit(args, "callback")),
          );
        default:
          throw new SkipTest(`session operation ${name}`);
      }
    }
    throw new SkipTest(`operation ${name} on ${op.object}`);
  }

  /**
   * The unified format's createChangeStream runs the stream's aggregate at once (the driver would wait for the
   * first read): as the Node driver's own runner does, through the cursor's cursorInit, exposed for that. It
   * reads no event, and an aggregate error is the operation's error.
   */
  private async changeStream(stream: ChangeStream): Promise<ChangeStream> {
    this.toClose.push(stream);
    await (stream as unknown as { cursor: { cursorInit(): Promise<void> } }).cursor.cursorInit();
    return stream;
  }

  private async collectionOperation(c: Collection, name: string, args: Document, opts: (extra?: Document) => Document): Promise<unknown> {
    switch (name) {
      case "insertOne":
        return c.insertOne(plain(args.document), opts(omit(args, "document")));
      case "insertMany":
        return c.insertMany(plain(args.documents), opts(omit(args, "documents")));
      case "updateOne":
        return c.updateOne(plain(args.filter), plain(args.update), opts(omit(args, "filter", "update")));
      case "updateMany":
        return c.updateMany(plain(args.filter), plain(args.update), opts(omit(args, "filter", "update")));
      case "replaceOne":
        return c.replaceOne(plain(args.filter), plain(args.replacement), opts(omit(args, "filter", "replacement")));
      case "deleteOne":
        return c.deleteOne(plain(args.filter), opts(omit(args, "filter")));
      case "deleteMany":
        return c.deleteMany(plain(args.filter), opts(omit(args, "filter")));
      case "findOneAndUpdate":
        return c.findOneAndUpdate(plain(args.filter), plain(args.update), opts(findAndModifyOptions(omit(args, "filter", "update"))));
      case "findOneAndReplace":
        return c.findOneAndReplace(plain(args.filter), plain(args.replacement), opts(findAndModifyOptions(omit(args, "filter", "replacement"))));
      case "findOneAndDelete":
        return c.findOneAndDelete(plain(args.filter), opts(findAndModifyOptions(omit(args, "filter"))));
      case "bulkWrite":
        return c.bulkWrite(plain(args.requests), opts(omit(args, "requests")));
      case "aggregate":
        return c.aggregate(plain(args.pipeline), opts(omit(args, "pipeline"))).toArray();
      case "find":
        return c.find(plain(args.filter ?? {}), opts(omit(args, "filter"))).toArray();
      case "findOne":
        return c.findOne(plain(args.filter ?? {}), opts(omit(args, "filter")));
      case "createFindCursor": {
        const cursor = c.find(plain(args.filter ?? {}), opts(omit(args, "filter")));
        await cursor.hasNext().catch(() => undefined);
        this.toClose.push(cursor);
        return cursor;
      }
      case "countDocuments":
        return c.countDocuments(plain(args.filter), opts(omit(args, "filter")));
      case "estimatedDocumentCount":
        return c.estimatedDocumentCount(opts(args));
      case "count":
        return c.count(plain(args.filter ?? {}), opts(omit(args, "filter")));
      case "distinct":
        return c.distinct(args.fieldName, plain(args.filter ?? {}), opts(omit(args, "fieldName", "filter")));
      case "createIndex":
        return c.createIndex(plain(args.keys), opts(omit(args, "keys")));
      case "dropIndex":
        return c.dropIndex(args.name, opts(omit(args, "name")));
      case "dropIndexes":
        return c.dropIndexes(opts(args));
      case "listIndexes":
        return c.listIndexes(opts(args)).toArray();
      case "drop":
        return c.drop(opts(args));
      case "rename":
        return c.rename(args.to, opts(omit(args, "to")));
      case "createChangeStream":
        return this.changeStream(c.watch(plain(args.pipeline ?? []), opts(omit(args, "pipeline"))));
      default:
        throw new SkipTest(`collection operation ${name}`);
    }
  }

  private async testRunnerOperation(name: string, args: Document): Promise<unknown> {
    switch (name) {
      case "failPoint": {
        const client = this.entities.get(args.client) as MongoClient;
        await client.db("admin").command(plain(args.failPoint));
        this.toClose.push({ close: () => this.setup.db("admin").command({ configureFailPoint: args.failPoint.configureFailPoint, mode: "off" }) });
        return undefined;
      }
      case "createEntities":
        return this.createEntities(args.entities);
      case "assertSessionTransactionState": {
        const session = this.entities.get(args.session) as ClientSession & { transaction: { state: string } };
        // The driver's state names: STARTING_TRANSACTION, TRANSACTION_IN_PROGRESS... against the format's starting,
        // in_progress...
        const state = TRANSACTION_STATES[session.transaction.state] ?? session.transaction.state;
        if (state !== args.state) throw new Error(`session transaction state ${state}, expected ${args.state}`);
        return undefined;
      }
      case "assertSessionPinned":
      case "assertSessionUnpinned": {
        const session = this.entities.get(args.session) as ClientSession & { transaction: { isPinned: boolean } };
        if (session.transaction.isPinned !== (name === "assertSessionPinned"))
          throw new Error(`session is ${session.transaction.isPinned ? "" : "not "}pinned`);
        return undefined;
      }
      case "assertCollectionExists":
      case "assertCollectionNotExists": {
        const names = (await this.setup.db(args.databaseName).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
        const exists = names.includes(args.collectionName);
        if (exists !== (name === "assertCollectionExists"))
          throw new Error(`collection ${args.databaseName}.${args.collectionName} ${exists ? "exists" : "does not exist"}`);
        return undefined;
      }
      case "assertIndexExists":
      case "assertIndexNotExists": {
        const indexes = await this.setup
          .db(args.databaseName)
          .collection(args.collectionName)
          .listIndexes()
          .toArray()
          .catch(() => [] as Document[]);
        const exists = indexes.some((i) => i.name === args.indexName);
        if (exists !== (name === "assertIndexExists")) throw new Error(`index ${args.indexName} ${exists ? "exists" : "does not exist"}`);
        return undefined;
      }
      case "assertSessionDirty":
      case "assertSessionNotDirty": {
        const session = this.entities.get(args.session) as ClientSession & { serverSession?: { isDirty?: boolean } };
        const dirty = session.serverSession?.isDirty === true;
        if (dirty !== (name === "assertSessionDirty")) throw new Error(`session is ${dirty ? "" : "not "}dirty`);
        return undefined;
      }
      case "assertSameLsidOnLastTwoCommands":
      case "assertDifferentLsidOnLastTwoCommands": {
        const events = this.clientEntity(args.client).events.filter((e) => e.type === "commandStartedEvent");
        const [a, b] = events.slice(-2).map((e) => (e.event as CommandStartedEvent).command.lsid);
        const same = sameScalar(a, b);
        if (same !== (name === "assertSameLsidOnLastTwoCommands")) throw new Error(`lsids are ${same ? "the same" : "different"}`);
        return undefined;
      }
      case "assertNumberConnectionsCheckedOut": {
        const checkedOut = this.clientEntity(args.client).checkedOut;
        if (checkedOut !== toNumber(args.connections)) throw new Error(`${checkedOut} connections checked out, expected ${args.connections}`);
        return undefined;
      }
      case "waitForEvent": {
        // Polls until enough matching events were observed; the test's deadline ends a wait that never succeeds.
        const entity = this.clientEntity(args.client);
        while (countMatching(entity, args.event, this.matchEvents) < toNumber(args.count)) await new Promise((r) => setTimeout(r, 10));
        return undefined;
      }
      case "assertEventCount": {
        const n = countMatching(this.clientEntity(args.client), args.event, this.matchEvents);
        if (n !== toNumber(args.count)) throw new Error(`${n} matching events observed, expected ${args.count}`);
        return undefined;
      }
      case "wait":
        await new Promise((r) => setTimeout(r, Number(args.ms)));
        return undefined;
      default:
        throw new SkipTest(`testRunner operation ${name}`);
    }
  }

  checkEvents(expected: Document[]): void {
    for (const forClient of expected) checkClientEvents(forClient, this.clientEntity(forClient.client), this.matchEvents);
  }

  /** Event fields are matched as root documents (extra fields allowed), as the unified format says. */
  private readonly matchEvents: MatchFn = (expected, actual, where) => this.matcher.match(expected, actual, true, where);

  private clientEntity(id: string): ClientEntity {
    const entity = this.clients.get(id);
    if (!entity) throw new Error(`no client ${id}`);
    return entity;
  }

  async checkOutcome(outcome: Document[] | undefined): Promise<void> {
    for (const data of outcome ?? []) {
      const docs = await this.setup
        .db(data.databaseName)
        .collection(data.collectionName)
        .find({}, { sort: { _id: 1 } })
        .toArray();
      try {
        this.matcher.match(data.documents, docs, false, "outcome");
      } catch (err) {
        throw new Error(`${data.databaseName}.${data.collectionName}: ${(err as Error).message}; actual ${show(docs)}`);
      }
    }
  }
}

function omit(args: Document, ...keys: string[]): Document {
  const out = { ...args };
  for (const k of keys) delete out[k];
  return out;
}

function findAndModifyOptions(args: Document): Document {
  const out: Document = { ...args, includeResultMetadata: false };
  if (out.returnDocument !== undefined) out.returnDocument = String(out.returnDocument).toLowerCase() === "after" ? "after" : "before";
  return out;
}

function isDb(v: unknown): v is Db {
  return (
    v !== null &&
    typeof v === "object" &&
    typeof (v as Db).createCollection === "function" &&
    typeof (v as Db).databaseName === "string" &&
    !("collectionName" in (v as object))
  );
}

function isCollection(v: unknown): v is Collection {
  return v !== null && typeof v === "object" && typeof (v as Collection).insertOne === "function";
}

function isSession(v: unknown): v is ClientSession {
  return v !== null && typeof v === "object" && typeof (v as ClientSession).endSession === "function" && "serverSession" in (v as object);
}

/** Driver results as the unified format describes them (plain documents; counts and ids under the spec's names). */
function normalizeResult(result: unknown): unknown {
  if (result === null || result === undefined || typeof result !== "object") return result;
  const r = result as Document;
  if (typeof r.toJSON === "function" && "insertedCount" in r && "upsertedIds" in r) {
    // BulkWriteResult
    return {
      insertedCount: r.insertedCount,
      matchedCount: r.matchedCount,
      modifiedCount: r.modifiedCount,
      deletedCount: r.deletedCount,
      upsertedCount: r.upsertedCount,
      upsertedIds: r.upsertedIds,
      insertedIds: r.insertedIds,
    };
  }
  if (isClientBulkWriteResult(r)) return normalizeClientBulkWriteResult(r);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Running one test

export async function runTest(file: SpecFile, test: Document, server: ServerInfo, setup: MongoClient): Promise<Outcome> {
  const fileReq = unmetRequirements(file.json.runOnRequirements, server);
  if (fileReq) return { status: "notApplicable", reason: fileReq };
  const testReq = unmetRequirements(test.runOnRequirements, server);
  if (testReq) return { status: "notApplicable", reason: testReq };
  if (test.skipReason) return { status: "skipped", reason: String(test.skipReason) };
  const ctx = new TestContext(server, setup);
  let timer: NodeJS.Timeout | undefined;
  try {
    const body = async () => {
      // As the unified format asks: transactions an earlier test left open (a failed abort) end before this one.
      await setup.db("admin").command({ killAllSessions: [] });
      await ctx.createEntities((file.json.createEntities as Document[]) ?? []);
      await ctx.initialData(file.json.initialData as Document[] | undefined);
      for (const op of (test.operations as Document[]) ?? []) await ctx.runOperation(op);
      if (test.expectEvents) ctx.checkEvents(test.expectEvents as Document[]);
      await ctx.checkOutcome(test.outcome as Document[] | undefined);
    };
    // A test waiting for something that never comes (an event, a reply) fails after TEST_DEADLINE_MS.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${TEST_DEADLINE_MS} ms`)), TEST_DEADLINE_MS);
    });
    await Promise.race([body(), deadline]);
    return { status: "passed" };
  } catch (err) {
    if (err instanceof SkipTest) return { status: "skipped", reason: err.message };
    return { status: "failed", reason: (err as Error)?.message ?? String(err) };
  } finally {
    clearTimeout(timer);
    await ctx.close();
  }
}

/** Far above any passing test's time (tens of ms), so a loaded shared machine does not fail one. */
const TEST_DEADLINE_MS = 5000;

const TRANSACTION_STATES: Record<string, string> = {
  NO_TRANSACTION: "none",
  STARTING_TRANSACTION: "starting",
  TRANSACTION_IN_PROGRESS: "in_progress",
  TRANSACTION_COMMITTED: "committed",
  TRANSACTION_COMMITTED_EMPTY: "committed",
  TRANSACTION_ABORTED: "aborted",
};
