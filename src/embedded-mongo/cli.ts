// `npm run mongo:embedded -- --port 27999`: serves until SIGINT/SIGTERM, printing the URI once listening.
import { startEmbeddedMongo } from "./server.ts";

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

const server = await startEmbeddedMongo({ port, host });
console.log(server.uri);

let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  void server.stop().then(() => process.exit(0));
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
