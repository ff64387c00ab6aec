// Process entry: config, database, app, listen. SIGTERM or SIGINT (or the death of the parent process) drains:
// stop accepting, finish running requests and jobs, close the database.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { type DevCredentials, devCredentialsPath, readDevCredentials, writeDevCredentials } from "./dev-credentials.ts";
import { hashApiKey } from "./domain/api-keys.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./observability/logger.ts";

/**
 * The service's modules, loaded once the configuration has been read: a configuration error is reported at once,
 * before the service's modules (most of a start's time) are loaded.
 */
async function loadServiceModules() {
  const [{ createApp }, { bootstrapDefaultProject }, { connectDatabase }] = await Promise.all([
    import("./app.ts"),
    import("./bootstrap.ts"),
    import("./store/database.ts"),
  ]);
  return { createApp, bootstrapDefaultProject, connectDatabase };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  const loading = loadServiceModules();
  // Awaited below; if the embedded database fails to start first, its error is the one reported.
  loading.catch(() => {});
  // The embedded database runs on its own thread, so the service and the database each get a core (its thread
  // loads and starts while this one loads the service's modules). It keeps its data in SVC_DATA_DIR and is a
  // one-member replica set, so workers and jobs wake through change streams.
  const embedded = config.mongodbUri === undefined ? await startEmbedded(config) : null;
  const { createApp, bootstrapDefaultProject, connectDatabase } = await loading;
  const database = await connectDatabase(config.mongodbUri ?? embeddedDatabaseUri(embedded!.uri));
  // On the embedded default, the credentials an earlier start generated are kept in SVC_DATA_DIR and used again.
  const stored: DevCredentials = embedded ? readDevCredentials(config.dataDir) : {};
  const adminToken = config.adminToken ?? stored.admin_token ?? `adm_${randomBytes(24).toString("base64url")}`;
  const adminTokenIsNew = config.adminToken === undefined && stored.admin_token === undefined;
  const app = await createApp({ config, database, adminToken, logger });

  const lines: string[] = [];
  // `export` lines a shell can paste, so the README's examples run as they are; a variable given to this process
  // is already in its shell, and a kept key's secret is not stored (outside SVC_DATA_DIR's development credentials).
  const exports: string[] = config.adminToken === undefined ? [`SVC_ADMIN_TOKEN=${adminToken}`] : [];
  if (embedded) {
    lines.push(`database      embedded MongoDB (replica set ${EMBEDDED_REPLICA_SET}) at ${embedded.uri} (production: set MONGODB_URI)`);
    lines.push(`data          ${config.dataDir} (SVC_DATA_DIR; kept across restarts; to reset: stop, then rm -rf it)`);
  }
  // On a restart the Default project's keys are kept, but only their hashes are stored: say how to get one.
  let keysKept: ((base: string) => string[]) | null = null;
  if (config.bootstrap) {
    // A kept secret is adopted again unless its key was revoked since (then the project's kept or a new key serves).
    const usable = async (secret: string | undefined) => {
      if (secret === undefined) return undefined;
      const key = await app.repositories.apiKeys.findBySecretHash(hashApiKey(secret));
      return key?.revoked_at ? undefined : secret;
    };
    const boot = await bootstrapDefaultProject(
      { tenancy: app.tenancy, ...app.repositories },
      { sandboxKey: config.sandboxKey ?? (await usable(stored.sandbox_key)), liveKey: config.liveKey ?? (await usable(stored.live_key)) },
    );
    if (embedded) {
      writeDevCredentials(config.dataDir, {
        ...(config.adminToken === undefined ? { admin_token: adminToken } : stored.admin_token ? { admin_token: stored.admin_token } : {}),
        ...(config.sandboxKey === undefined && boot.sandboxKey ? { sandbox_key: boot.sandboxKey } : {}),
        ...(config.liveKey === undefined && boot.liveKey ? { live_key: boot.liveKey } : {}),
      });
    }
    lines.push(`organization  Default (${boot.organizationId})`);
    lines.push(`project       Default (${boot.projectId})`);
    const shown = (secret: string | null, given: string | undefined, variable: string, id: string) => {
      if (given === undefined && secret !== null) exports.push(`${variable}=${secret}`);
      return `${given !== undefined ? `(from ${variable})` : (secret ?? "(existing key kept; its secret is not stored)")}   id ${id}`;
    };
    lines.push(`sandbox key   ${shown(boot.sandboxKey, config.sandboxKey, "SVC_SANDBOX_KEY", boot.sandboxKeyId)}`);
    lines.push(`live key      ${shown(boot.liveKey, config.liveKey, "SVC_LIVE_KEY", boot.liveKeyId)}`);
    // The `svc` CLI's key (SVC_API_KEY): the sandbox one, so the README's developer loop runs right after the paste.
    if (config.sandboxKey === undefined && boot.sandboxKey !== null) exports.push(`SVC_API_KEY=${boot.sandboxKey}`);
    if (embedded)
      lines.push(`credentials   ${devCredentialsPath(config.dataDir)} (development only, readable by you alone: the token and secrets above)`);
    const kept = [
      ...(boot.sandboxKey === null && config.sandboxKey === undefined ? [false] : []),
      ...(boot.liveKey === null && config.liveKey === undefined ? [true] : []),
    ];
    if (kept.length > 0) {
      keysKept = (base) => [
        "",
        "The Default project's keys were kept from an earlier run; their secrets are not stored. Use a secret you kept",
        "(set SVC_SANDBOX_KEY / SVC_LIVE_KEY to it, or give any new svc_test_... / svc_live_... value to adopt it),",
        "or create a key with AdminService.CreateApiKey (after pasting the export line below):",
        ...kept.map(
          (livemode) =>
            `  curl -s -X POST ${base}/svc.admin.v1.AdminService/CreateApiKey -H "Authorization: Bearer $SVC_ADMIN_TOKEN" -H "Content-Type: application/json" -d '{"project_id": "${boot.projectId}", "livemode": ${livemode}}'`,
        ),
      ];
    }
  }
  const { httpPort, grpcPort } = await app.listen().catch((error: unknown) => {
    throw listenError(error, config);
  });
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const api =
    config.role === "worker"
      ? []
      : [
          `REST          http://${host}:${httpPort}/v1   (OpenAPI: /v1/openapi.json)`,
          `Connect       http://${host}:${httpPort}       (Connect and gRPC-Web, every service)`,
          `gRPC          ${host}:${grpcPort}              (HTTP/2 cleartext)`,
          `dashboard     http://${host}:${httpPort}/dashboard   (sign in with a secret key or the admin token)`,
          `admin token   ${config.adminToken ? "(from SVC_ADMIN_TOKEN)" : `${adminToken}${adminTokenIsNew && !embedded ? "   (new for this run: set SVC_ADMIN_TOKEN to keep one)" : ""}`}`,
        ];
  // Where the API is, for the README's examples and the CLI, on whatever ports were taken.
  if (config.role !== "worker") exports.push(`SVC_URL=http://${host}:${httpPort}`, `SVC_GRPC_URL=http://${host}:${grpcPort}`);
  console.log(
    [
      `Svc is listening (role ${config.role})`,
      ...api,
      `health        http://${host}:${httpPort}/healthz`,
      `metrics       http://${host}:${httpPort}/metrics`,
      ...lines,
      ...(keysKept !== null && config.role !== "worker" ? keysKept(`http://${host}:${httpPort}`) : []),
      ...(exports.length > 0 && config.role !== "worker" ? ["", `export ${exports.join(" ")}`] : []),
    ].join("\n"),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "draining: no new connections, finishing running requests and jobs");
    // Draining ends with the grace period (webhook attempts still in flight then are cut short and recorded for
    // a retry); the writes after it and closing the database take well under a second. If something still hangs,
    // the process exits anyway SHUTDOWN_MARGIN_MS later, rather than hold its ports: 14 s in all by default.
    setTimeout(() => {
      logger.error({ signal }, "drain did not finish in time; exiting");
      process.exit(1);
    }, config.shutdownGraceMs + SHUTDOWN_MARGIN_MS).unref();
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

/**
 * How long a stopping process may take past SVC_SHUTDOWN_GRACE_MS before it exits regardless: with the default
 * grace (10 s), SIGTERM to exit takes 14 s at most (README, Shutdown and upgrades).
 */
const SHUTDOWN_MARGIN_MS = 4000;

/** A failure to start that one line explains: no stack trace. */
class StartupError extends Error {}

const EMBEDDED_REPLICA_SET = "rs0";

/**
 * The embedded server, durable in `config.dataDir` (its `mongo/` subdirectory) and a one-member replica set. Loaded
 * only here, so a service given MONGODB_URI never loads a module of the embedded database.
 */
async function startEmbedded(config: Config) {
  const dbPath = path.join(config.dataDir, "mongo");
  const { startEmbeddedMongo } = await import("./embedded-mongo/index.ts");
  try {
    return await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true, replSet: EMBEDDED_REPLICA_SET, dbPath });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.startsWith("DBPathInUse")) {
      const pid = /\(pid (\d+)\)/.exec(message)?.[1];
      throw new StartupError(
        `SVC_DATA_DIR ${config.dataDir} is in use by another process${pid ? ` (pid ${pid})` : ""}; stop it or set SVC_DATA_DIR to another directory`,
      );
    }
    throw new StartupError(`the embedded database cannot start on SVC_DATA_DIR ${config.dataDir}: ${message}`);
  }
}

/** The embedded server's URI (`mongodb://host:port/?replicaSet=...`) naming the database `svc`. */
function embeddedDatabaseUri(serverUri: string): string {
  const uri = new URL(serverUri);
  uri.pathname = "/svc";
  return uri.toString();
}

/** A port that cannot be bound, named by its variable; anything else as it is. */
function listenError(error: unknown, config: Config): unknown {
  const { code, port } = error as { code?: string; port?: number };
  const variable = port === config.port ? "PORT" : "GRPC_PORT";
  const where = `${config.host.includes(":") ? `[${config.host}]` : config.host}:${port} (${variable})`;
  const otherPort = `set ${variable} to another port (0 picks a free one)`;
  switch (code) {
    case "EADDRINUSE":
      return new StartupError(`${where} is already in use by another process; stop it or ${otherPort}`);
    case "EACCES":
      return new StartupError(`${where} needs privileges this process does not have; ${otherPort}`);
    case "EADDRNOTAVAIL":
      return new StartupError(`HOST ${config.host} is not an address of this machine; set HOST to one of its addresses`);
    default:
      return error;
  }
}

main().catch((error) => {
  if (error instanceof ConfigError) console.error(`configuration error: ${error.message}`);
  else if (error instanceof StartupError) console.error(`cannot start: ${error.message}`);
  else console.error(error);
  process.exit(1);
});
