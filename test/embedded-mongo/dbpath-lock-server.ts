// A database process for dbpath-lock.spec.ts, run as `node --import tsx` runs the CLI: it loads the embedded
// server, prints "ready" and waits; on SIGUSR1 it starts on the --dbpath given (argv[2]) and prints the URI
// as the CLI does, or "error <message>" and exits 1. Loading ahead lets a test restart a killed server at once.
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";

const dbPath = process.argv[2]!;
const idle = setInterval(() => {}, 60_000);
process.once("SIGUSR1", () => {
  startEmbeddedMongo({ dbPath }).then(
    (server) => console.log(server.uri),
    (err: Error) => {
      console.log(`error ${err.message}`);
      clearInterval(idle);
      process.exitCode = 1;
    },
  );
});
console.log("ready");
