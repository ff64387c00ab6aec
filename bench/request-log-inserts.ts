// The database's part of recording, steady and alone: the request log's inserts as the writer sends them at its
// fullest (500 entries per insert), one after the other over one connection, to the embedded database at
// BENCH_MONGO_URI (its own process, BENCH_DB_PID). The commands are encoded before the measure, so this process's
// own work is next to nothing beside the database's. After `preload` entries (a log that has been recording a
// while), prints as one JSON line the database process's CPU per entry over the next `entries`.
import { connect, type Socket } from "node:net";
import { type Document, deserialize, serialize } from "bson";
import { HEADER_SIZE, OP_MSG } from "../src/embedded-mongo/server/wire.ts";
import { connectDatabase } from "../src/store/database.ts";
import { RequestLogRepository } from "../src/store/request-log-repository.ts";
import { cpuSecondsOf as cpuSeconds } from "./process-cpu.ts";
import { loadEntry, type RequestLogLoad } from "./request-log-entries.ts";

const spec = JSON.parse(process.argv[2]!) as { load: RequestLogLoad; preload: number; entries: number };
const BATCH = 500;
const uri = new URL(process.env.BENCH_MONGO_URI!);
const dbName = uri.pathname.slice(1);
const databasePid = Number(process.env.BENCH_DB_PID);

const database = await connectDatabase(uri.href);
await new RequestLogRepository(database.db).ensureIndexes();
await database.close();

const principal = { apiKeyId: "key_bench_inserts", projectId: "bench-inserts", organizationId: "org_bench_inserts", livemode: false, rateLimit: 1 };

/** One insert command of the next BATCH entries, as an OP_MSG with the entries in a document sequence (as the driver sends it). */
function insertMessage(requestId: number): Buffer {
  const body = serialize({ insert: "request_logs", ordered: false, $db: dbName });
  const documents = Array.from({ length: BATCH }, () => serialize(loadEntry(spec.load, principal)));
  const identifier = Buffer.from("documents\0");
  const sequenceSize = Buffer.alloc(4);
  sequenceSize.writeInt32LE(4 + identifier.length + documents.reduce((sum, d) => sum + d.length, 0));
  const headerAndFlags = Buffer.alloc(HEADER_SIZE + 4);
  const message = Buffer.concat([headerAndFlags, Buffer.from([0]), body, Buffer.from([1]), sequenceSize, identifier, ...documents]);
  message.writeInt32LE(message.length, 0);
  message.writeInt32LE(requestId, 4);
  message.writeInt32LE(OP_MSG, 12);
  return message;
}

/** Sends each message once the previous one is answered; every answer must say the whole batch was inserted. */
async function send(socket: Socket, messages: Buffer[]): Promise<void> {
  let buffered = Buffer.alloc(0);
  const replies: ((reply: Document) => void)[] = [];
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
      const length = buffered.readInt32LE(0);
      replies.shift()!(deserialize(buffered.subarray(HEADER_SIZE + 5, length)));
      buffered = buffered.subarray(length);
    }
  };
  socket.on("data", onData);
  for (const message of messages) {
    const reply = await new Promise<Document>((resolve) => {
      replies.push(resolve);
      socket.write(message);
    });
    if (reply.ok !== 1 || reply.n !== BATCH) throw new Error(`insert answered ${JSON.stringify(reply)}`);
  }
  socket.off("data", onData);
}

const socket = connect(Number(uri.port), uri.hostname);
await new Promise((resolve) => socket.once("connect", resolve));
let requestId = 1;
const batches = (entries: number) => Array.from({ length: Math.ceil(entries / BATCH) }, () => insertMessage(requestId++));
await send(socket, batches(spec.preload));
const measured = batches(spec.entries);
const before = cpuSeconds(databasePid);
await send(socket, measured);
const databaseSeconds = cpuSeconds(databasePid) - before;
socket.end();
const entries = measured.length * BATCH;
process.stdout.write(`${JSON.stringify({ entries, databaseMicrosPerEntry: (databaseSeconds * 1e6) / entries })}\n`);
