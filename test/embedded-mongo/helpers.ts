// Test target selection: MONGODB_URI when set (a real mongod), else one embedded server shared by the suite.
import { expect } from "chai";
import { Long, MongoClient, type Db, type Document, type MongoClientOptions } from "mongodb";
import { startEmbeddedMongo, type EmbeddedMongo, type EmbeddedMongoOptions } from "../../src/embedded-mongo/index.ts";

let embedded: Promise<EmbeddedMongo> | undefined;

export const usingRealMongo = Boolean(process.env.MONGODB_URI);

/** The embedded server (started once), or undefined when the suite targets MONGODB_URI. */
export async function embeddedServer(): Promise<EmbeddedMongo | undefined> {
  if (usingRealMongo) return undefined;
  // Unref'd: the shared server does not keep the test process alive once the specs' clients are closed.
  embedded ??= startEmbeddedMongo({ ttlSweepIntervalMs: 100, unref: true });
  return embedded;
}

export async function targetUri(): Promise<string> {
  return process.env.MONGODB_URI ?? (await embeddedServer())!.uri;
}

export interface TestDb {
  client: MongoClient;
  db: Db;
}

/**
 * Registers before/after hooks giving the spec file its own, freshly dropped database.
 * The returned object is filled in by the `before` hook.
 */
export function useTestDatabase(name: string): TestDb {
  const ctx = {} as TestDb;
  before(async () => {
    ctx.client = new MongoClient(await targetUri(), { serverSelectionTimeoutMS: 5000 });
    await ctx.client.connect();
    ctx.db = ctx.client.db(name);
    await ctx.db.dropDatabase();
  });
  after(async () => {
    await ctx.db?.dropDatabase().catch(() => undefined);
    await ctx.client?.close();
  });
  return ctx;
}

export interface ReplicaSetDb extends TestDb {
  mongo: EmbeddedMongo;
}

export interface ReplicaSetDbOptions {
  /** Server options besides `replSet` (e.g. `ttlSweepIntervalMs`). */
  server?: Omit<EmbeddedMongoOptions, "replSet">;
  /** Options of the spec's client (e.g. `retryWrites: false`). */
  client?: MongoClientOptions;
  /** Drop the database before each test (the default). */
  dropBeforeEach?: boolean;
}

/**
 * Registers hooks giving the spec file an embedded one-member replica set ("rs0") of its own, whatever MONGODB_URI
 * says, with a client and the database `name`; stopped after the file. The returned object is filled in by the
 * `before` hook.
 */
export function useReplicaSet(name: string, options: ReplicaSetDbOptions = {}): ReplicaSetDb {
  const ctx = {} as ReplicaSetDb;
  before(async () => {
    ctx.mongo = await startEmbeddedMongo({ ...options.server, replSet: "rs0" });
    ctx.client = new MongoClient(ctx.mongo.uri, options.client);
    ctx.db = ctx.client.db(name);
  });
  after(async () => {
    await ctx.client?.close();
    await ctx.mongo?.stop();
  });
  if (options.dropBeforeEach ?? true) {
    beforeEach(async () => {
      await ctx.db.dropDatabase();
    });
  }
  return ctx;
}

/** The error a promise rejects with (fails the test if it resolves). */
export async function failure(p: Promise<unknown>): Promise<Document> {
  try {
    await p;
  } catch (err) {
    return err as Document;
  }
  throw new Error("expected an error");
}

/** Exactly `N` elements of `T`. */
export type Tuple<T, N extends number, First extends T[] = []> = First["length"] extends N ? First : Tuple<T, N, [...First, T]>;

/** `N` elements of `T` followed by any number more. */
export type AtLeast<T, N extends number> = [...Tuple<T, N>, ...T[]];

/** Fails the test unless `items` holds exactly `n` elements; after it, they read without an undefined check. */
export function expectLength<T, N extends number>(items: T[], n: N): asserts items is T[] & Tuple<T, N> {
  expect(items).to.have.length(n);
}

/** Fails the test unless `items` holds at least `n` elements; after it, the first `n` read without an undefined check. */
export function expectAtLeast<T, N extends number>(items: T[], n: N): asserts items is T[] & AtLeast<T, N> {
  expect(items.length, "number of items").to.be.at.least(n);
}

/** Resolves once `predicate` holds, polling every 25 ms; rejects after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The cursor id of a reply `db.command` decoded, as an int64. The driver decodes an int64 that fits a JS number as a
 * number, and getMore and killCursors take only an int64 (mongod refuses an int or a double with 14 TypeMismatch).
 */
export function cursorIdOf(reply: Document): Long {
  const id = (reply.cursor as { id: Long | number }).id;
  return typeof id === "number" ? Long.fromNumber(id) : id;
}
