// Snapshot reads (`readConcern: {level: "snapshot"}`, optionally `atClusterTime`) on the replica set: find,
// aggregate and distinct see every collection as it was at one cluster time (rebuilt from the oplog, see
// replication/snapshot-history.ts).
import type { Document, Timestamp } from "bson";
import type { Collection } from "../storage/collection.ts";
import type { CommandContext } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import type { Oplog } from "../replication/oplog.ts";
import { collectionAt } from "../replication/snapshot-history.ts";
import { Store } from "../storage/store.ts";

/** Commands that read at a snapshot (getMore and killCursors act on a cursor opened by one). */
const SNAPSHOT_COMMANDS = new Set(["find", "aggregate", "distinct", "getMore", "killCursors"]);

/**
 * Refuses `readConcern: {level: "snapshot"}` on a command that cannot read at a snapshot, as mongod does (72
 * InvalidOptions), and `atClusterTime` with another level.
 */
export function checkSnapshotSupport(cmd: Document, name: string): void {
  const readConcern = cmd.readConcern as Document | undefined;
  if (!readConcern || typeof readConcern !== "object") return;
  if (readConcern.level !== "snapshot") {
    if (readConcern.atClusterTime !== undefined)
      throw commandError(ErrorCodes.InvalidOptions, "atClusterTime field can be set only if level is equal to snapshot");
    return;
  }
  if (!SNAPSHOT_COMMANDS.has(name))
    throw commandError(ErrorCodes.InvalidOptions, `Command ${name} does not support { readConcern: { level: "snapshot" } }`);
}

/** Runs a read handler against the store as it was at `ts` (the context's other state is shared). */
export function atSnapshot(ctx: CommandContext, ts: Timestamp): CommandContext {
  return { ...ctx, server: { ...ctx.server, store: new SnapshotStore(ctx.server.store, ctx.server.oplog, ts) } };
}

/** The store's collections as of one cluster time, read-only; each collection is rebuilt once per command. */
class SnapshotStore extends Store {
  private readonly built = new Map<string, Collection | undefined>();

  constructor(
    private readonly live: Store,
    private readonly oplog: Oplog,
    readonly ts: Timestamp,
  ) {
    super();
  }

  override get(db: string, name: string): Collection | undefined {
    const key = `${db}.${name}`;
    if (!this.built.has(key)) this.built.set(key, collectionAt(this.live, this.oplog, this.ts, db, name));
    return this.built.get(key);
  }

  override ensure(): Collection {
    throw commandError(ErrorCodes.InvalidOptions, "a snapshot read cannot write");
  }

  override create(): Collection {
    throw commandError(ErrorCodes.InvalidOptions, "a snapshot read cannot write");
  }
}
