// Connection to the system of record. Repositories take collections from here; nothing else talks to MongoDB.
import {
  type ChangeStream,
  type ChangeStreamInsertDocument,
  type Collection,
  type Db,
  type Document,
  MongoClient,
  type MongoClientOptions,
  Timestamp,
} from "mongodb";

export interface Database {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

/** `options` add to the service's own (benchmarks monitor commands). */
export async function connectDatabase(uri: string, options: MongoClientOptions = {}): Promise<Database> {
  const client = new MongoClient(uri, { ...options, ignoreUndefined: true });
  await client.connect();
  // The database named in the URI, or "svc".
  const db = client.db(new URL(uri.replace(/^mongodb(\+srv)?:/, "http:")).pathname.slice(1) || "svc");
  return { client, db, close: () => client.close() };
}

/**
 * The TCP ports of the database servers this process connects to: those of the connection string, or of the SRV
 * answer for `mongodb+srv://` (the embedded server's random port included, since it is given by its URI).
 */
export function databasePorts(database: Database): number[] {
  const ports = database.client.options.hosts.map((host) => host.port ?? 27017);
  return [...new Set(ports)];
}

/** Whether the server is a replica set member (change streams are available), from its hello answer. */
export async function isReplicaSet(database: Database): Promise<boolean> {
  const hello = await database.db.admin().command({ hello: 1 });
  return typeof hello.setName === "string";
}

/**
 * The time from which a change stream on `collection` hears every write a read made now might not see: just after
 * the operation time of a majority read. Every write up to that time is majority-committed (a read made after this
 * answers sees it), and a change stream started at the returned time hears each later one, however late its cursor
 * is opened: so a caller can count on the stream from this answer on without waiting for its first getMore.
 */
export async function changeStreamStart(db: Db, collection: string): Promise<Timestamp> {
  const reply = await db.command({
    find: collection,
    filter: {},
    projection: { _id: 1 },
    limit: 1,
    singleBatch: true,
    readConcern: { level: "majority" },
  });
  const read = reply.operationTime;
  if (!(read instanceof Timestamp)) throw new Error("The database answered a majority read without an operationTime: is it a replica set?");
  // A timestamp's increment is 32 bits: past its last value the next second begins.
  return read.i === 0xffff_ffff ? new Timestamp({ t: read.t + 1, i: 0 }) : new Timestamp({ t: read.t, i: read.i + 1 });
}

/** The inserts into `collection` from `startAtOperationTime` on (a time changeStreamStart gave), by any process. */
export function insertChangeStream<T extends Document>(
  collection: Collection<T>,
  startAtOperationTime: Timestamp,
): ChangeStream<T, ChangeStreamInsertDocument<T>> {
  return collection.watch<T, ChangeStreamInsertDocument<T>>([{ $match: { operationType: "insert" } }], { startAtOperationTime });
}

/** The first cluster time of the second that `at` falls in (a change stream's start at a wall-clock moment). */
export function timestampAtSecond(at: Date): Timestamp {
  return new Timestamp({ t: Math.floor(at.getTime() / 1000), i: 0 });
}

/** True for the error of a change stream asked to start before the oldest history the server keeps. */
export function isChangeStreamHistoryLost(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === 286;
}

/** True for MongoDB's duplicate key error, whichever way the driver surfaces it. */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === 11000;
}
