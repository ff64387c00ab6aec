// The logical sessions this server has seen (mongod's LogicalSessionCache): every command carrying an `lsid`,
// and startSession / refreshSessions, mark the session used now; endSessions and 30 idle minutes forget it. The
// `$listLocalSessions` aggregation stage lists them, as mongod does.
import { createHash } from "node:crypto";
import { Binary, type Document } from "bson";
import { bsonTypeName } from "../bson/bson-type-names.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";

/** Without authentication every session belongs to the same (no) user: uid is the SHA-256 of nothing, as mongod's. */
export const NO_AUTH_UID = new Binary(createHash("sha256").digest(), 0);

interface LocalSession {
  id: Binary;
  lastUse: Date;
}

function idBytes(id: unknown): Uint8Array | undefined {
  if (id instanceof Binary) return id.buffer;
  if (id instanceof Uint8Array) return id;
  return undefined;
}

export class LocalSessionCache {
  private readonly byId = new Map<string, LocalSession>();

  get size(): number {
    return this.byId.size;
  }

  /** Marks the session of `lsid` (`{id: UUID}`) used now; a malformed lsid is ignored (its command checks it). */
  touch(lsid: unknown, now = new Date()): void {
    const bytes = idBytes((lsid as { id?: unknown } | null)?.id);
    if (!bytes) return;
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
    const known = this.byId.get(key);
    if (known) known.lastUse = now;
    else this.byId.set(key, { id: new Binary(Buffer.from(bytes), Binary.SUBTYPE_UUID), lastUse: now });
  }

  end(lsid: unknown): void {
    const bytes = idBytes((lsid as { id?: unknown } | null)?.id);
    if (bytes) this.byId.delete(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex"));
  }

  reap(cutoff: number): void {
    for (const [key, session] of this.byId) if (session.lastUse.getTime() < cutoff) this.byId.delete(key);
  }

  /**
   * `$listLocalSessions: {}` (the current user's sessions: all of them without authentication), `{allUsers: true}`
   * or `{users: [{user, db}, ...]}` (sessions of those users: none, since nobody is authenticated here).
   */
  list(spec: unknown): Document[] {
    if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
      throw commandError(ErrorCodes.TypeMismatch, `$listLocalSessions options must be an object, but found type: ${bsonTypeName(spec)}`);
    }
    const options = spec as Document;
    for (const key of Object.keys(options)) {
      if (key !== "allUsers" && key !== "users") throw commandError(40415, `BSON field '$listLocalSessions.${key}' is an unknown field.`);
    }
    if (options.allUsers !== undefined && typeof options.allUsers !== "boolean") {
      throw commandError(ErrorCodes.TypeMismatch, "BSON field '$listLocalSessions.allUsers' is the wrong type, expected type 'bool'");
    }
    let uids: string[] | undefined;
    if (options.users !== undefined) {
      if (!Array.isArray(options.users))
        throw commandError(ErrorCodes.TypeMismatch, "BSON field '$listLocalSessions.users' is the wrong type, expected type 'array'");
      if (options.allUsers === true && options.users.length > 0) {
        throw commandError(ErrorCodes.BadValue, "$listLocalSessions may not specify {allUsers:true} and {users:[...]} at the same time");
      }
      uids = options.users.map((u) => {
        const { user, db } = (u ?? {}) as Document;
        if (typeof user !== "string" || typeof db !== "string")
          throw commandError(ErrorCodes.TypeMismatch, "BSON field '$listLocalSessions.users.user' is missing or is the wrong type");
        return createHash("sha256").update(`${user}@${db}`).digest("hex");
      });
    }
    const noAuthUid = Buffer.from(NO_AUTH_UID.buffer).toString("hex");
    if (uids && options.allUsers !== true && !uids.includes(noAuthUid)) return [];
    return [...this.byId.values()].map((s) => ({ _id: { id: s.id, uid: NO_AUTH_UID }, lastUse: s.lastUse }));
  }
}

/** `$listLocalSessions` is a first stage of a database-level aggregate (`{aggregate: 1}`), as mongod requires. */
export function checkListLocalSessionsStage(collection: string | undefined, position: number): void {
  if (collection !== undefined) {
    throw commandError(ErrorCodes.InvalidNamespace, "$listLocalSessions must be run against the database with {aggregate: 1}, not a collection");
  }
  if (position !== 0) throw commandError(40602, "$listLocalSessions is only valid as the first stage in a pipeline");
}
