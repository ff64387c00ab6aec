// Test target selection: MONGODB_URI when set (a real mongod), else one embedded server shared by the suite.
import { MongoClient, type Db } from "mongodb";
import { startEmbeddedMongo, type EmbeddedMongo } from "../../src/embedded-mongo/index.ts";

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

/** Resolves once `predicate` holds, polling every 25 ms; rejects after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
