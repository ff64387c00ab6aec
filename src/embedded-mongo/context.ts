// State shared by every command handler of one server instance.
import type { Document } from "bson";
import type { CursorRegistry } from "./cursors.ts";
import type { Store } from "./store.ts";

export interface ServerState {
  store: Store;
  cursors: CursorRegistry;
}

export interface CommandContext {
  /** The database named by the command's `$db` (or the OP_QUERY namespace). */
  db: string;
  server: ServerState;
  connectionId: number;
}

/** Handlers are synchronous on purpose: a command runs to completion before any other starts (atomicity). */
export type CommandHandler = (cmd: Document, ctx: CommandContext) => Document;
