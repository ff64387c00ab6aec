// The database of the test run: MONGODB_URI when set (a real mongod), else one embedded server for the whole
// process (unref'd: it does not keep the process alive once the run's clients are closed). Each caller gets a
// database of its own, so tests never see each other's data. The embedded server is a one-member replica set,
// the production shape: the services' workers and Agenda wake through change streams, writes are retryable.
import { randomBytes } from "node:crypto";
import { startEmbeddedMongo, type EmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { connectDatabase, type Database } from "../../src/store/database.ts";

let embedded: Promise<EmbeddedMongo> | null = null;

/** The server URI without a database name. */
export async function testServerUri(): Promise<string> {
  const external = process.env.MONGODB_URI;
  if (external) return external;
  embedded ??= startEmbeddedMongo({ host: "127.0.0.1", unref: true, replSet: "rs0" });
  return (await embedded).uri;
}

/** The URI of a fresh database named `<prefix>_<random>` on the test server. */
export async function freshDatabaseUri(prefix = "svc_test"): Promise<string> {
  const uri = new URL(await testServerUri());
  uri.pathname = `/${prefix}_${randomBytes(6).toString("hex")}`;
  return uri.toString();
}

export async function freshDatabase(prefix?: string): Promise<Database> {
  return connectDatabase(await freshDatabaseUri(prefix));
}
