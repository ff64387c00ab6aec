// `npm run mongo:embedded -- --port 27999 [--host H] [--replSet NAME] [--dbpath DIR]`: serves until
// SIGINT/SIGTERM, printing the URI once listening. Flags are spelled as mongod's.
import { startEmbeddedMongo } from "./index.ts";

function argValue(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  const inline = args.find((a) => a.startsWith(`${name}=`));
  return inline?.slice(name.length + 1);
}

const portArg = argValue("--port");
const port = portArg === undefined ? 27017 : Number(portArg);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`invalid --port ${portArg}`);
  process.exit(2);
}
const host = argValue("--host") ?? "127.0.0.1";
const replSet = argValue("--replSet");
const dbPath = argValue("--dbpath");
for (const [flag, value] of [
  ["--replSet", replSet],
  ["--dbpath", dbPath],
] as const) {
  if (value !== undefined && (value === "" || value.startsWith("--"))) {
    console.error(`${flag} needs a value`);
    process.exit(2);
  }
}

let server: Awaited<ReturnType<typeof startEmbeddedMongo>>;
try {
  server = await startEmbeddedMongo({
    port,
    host,
    ...(replSet === undefined ? {} : { replSet }),
    ...(dbPath === undefined ? {} : { dbPath }),
  });
} catch (err) {
  console.error(`cannot start: ${(err as Error).message}`);
  process.exit(1);
}
console.log(server.uri);

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  void server.stop().then(() => process.exit(0));
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
