// The service of bench/grpc-vs-rest.bench.ts, in a process of its own: the embedded database on a worker thread
// (as `npm start` runs it), Svc on ephemeral ports with request logs at the shipped level (info) written to
// /dev/null, the Default project bootstrapped and one user created. Prints one JSON line on standard output
// ({ pid, httpPort, grpcPort, key, userId }), then serves until its standard input closes.
import { createApp } from "../src/app.ts";
import { bootstrapDefaultProject } from "../src/bootstrap.ts";
import { benchAppOptions, startBenchDatabase } from "./bench-service.ts";

const { mongo, uri, database } = await startBenchDatabase("bench_grpc_vs_rest");
const app = await createApp(benchAppOptions(uri, database, "bench-admin-token"));
const boot = await bootstrapDefaultProject({ tenancy: app.tenancy, ...app.repositories }, {});
const { httpPort, grpcPort } = await app.listen({ http: 0, grpc: 0 });
const key = boot.sandboxKey!;

const created = await fetch(`http://127.0.0.1:${httpPort}/v1/users`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ phone: "+14155550100", email: "bench@example.com", first_name: "Bench" }),
});
if (created.status !== 201) throw new Error(`creating the user answered ${created.status}: ${await created.text()}`);
const userId = ((await created.json()) as { id: string }).id;

process.stdout.write(`${JSON.stringify({ pid: process.pid, httpPort, grpcPort, key, userId })}\n`);

process.stdin.resume();
process.stdin.once("end", async () => {
  await app.close();
  await database.close();
  await mongo.stop();
  process.exit(0);
});
