// Process entry: config, database, app, listen. SIGTERM or SIGINT (or the death of the parent process) drains:
// stop accepting, finish running requests and jobs, close the database.
import { randomBytes } from "node:crypto";
import { createApp } from "./app.ts";
import { bootstrapDefaultProject } from "./bootstrap.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { startEmbeddedMongo } from "./embedded-mongo/index.ts";
import { createLogger } from "./observability/logger.ts";
import { connectDatabase } from "./store/database.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  // The embedded database runs on its own thread, so the service and the database each get a core.
  const embedded = config.mongodbUri === undefined ? await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true }) : null;
  const database = await connectDatabase(config.mongodbUri ?? `${embedded!.uri.replace(/\/?(\?.*)?$/, "")}/svc`);
  const adminToken = config.adminToken ?? `adm_${randomBytes(24).toString("base64url")}`;
  const app = await createApp({ config, database, adminToken, logger });

  const lines: string[] = [];
  if (embedded) lines.push(`database      embedded in-memory MongoDB at ${embedded.uri} (data is lost on exit; production: set MONGODB_URI)`);
  if (config.bootstrap) {
    const boot = await bootstrapDefaultProject({ tenancy: app.tenancy, ...app.repositories }, config);
    lines.push(`project       Default (${boot.projectId})`);
    const shown = (secret: string | null, given: string | undefined, variable: string) =>
      given !== undefined ? `(from ${variable})` : secret ?? "(existing key kept; its secret is not stored)";
    lines.push(`sandbox key   ${shown(boot.sandboxKey, config.sandboxKey, "SVC_SANDBOX_KEY")}`);
    lines.push(`live key      ${shown(boot.liveKey, config.liveKey, "SVC_LIVE_KEY")}`);
  }
  const { httpPort, grpcPort } = await app.listen();
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const api =
    config.role === "worker"
      ? []
      : [
          `REST          http://${host}:${httpPort}/v1   (OpenAPI: /v1/openapi.json)`,
          `Connect       http://${host}:${httpPort}       (Connect and gRPC-Web, every service)`,
          `gRPC          ${host}:${grpcPort}              (HTTP/2 cleartext)`,
          `admin token   ${config.adminToken ? "(from SVC_ADMIN_TOKEN)" : adminToken}`,
        ];
  console.log(
    [
      `Svc is listening (role ${config.role})`,
      ...api,
      `health        http://${host}:${httpPort}/healthz`,
      `metrics       http://${host}:${httpPort}/metrics`,
      ...lines,
    ].join("\n"),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "draining: no new connections, finishing running requests and jobs");
    await app.close();
    await database.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // A parent killed without a chance to signal (SIGKILL of `npm start`) leaves this process re-parented: drain
  // and exit then too, rather than live on as an orphan holding the ports. (Run it under a supervisor, not detached.)
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stop("parent exited");
  }, 1000).unref();
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `configuration error: ${error.message}` : error);
  process.exit(1);
});
