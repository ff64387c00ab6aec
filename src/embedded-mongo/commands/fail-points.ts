// mongod's test fail points used by drivers' tests: `failCommand` makes chosen commands answer an error, close
// their connection, wait before answering, or carry a writeConcernError; `onPrimaryTransactionalWrite` fails a
// retryable write's statement before it applies (failBeforeCommitExceptionCode) or closes the connection after
// it applied;
// `failGetMoreAfterCursorCheckout` fails getMore. Configuring any other fail point answers mongod's "not found".
import { Long, type Document } from "bson";
import type { CommandContext, ServerState } from "./context.ts";
import { CommandError, commandError, ErrorCodes, serverErrorLabels } from "../bson/errors.ts";
import type { StatementFailure } from "../replication/sessions.ts";

/** A reply the server must hold back `afterMs`, then send what `settle()` gives (null: close the connection). */
export interface DeferredReply {
  afterMs: number;
  settle(): Document | null;
}

const DEFERRED = Symbol("deferredReply");

/** The deferred action carried by a reply of runCommand, if a fail point asked for one. */
export function deferredReply(reply: Document): DeferredReply | undefined {
  return (reply as { [DEFERRED]?: DeferredReply })[DEFERRED];
}

function deferred(action: DeferredReply): Document {
  // A symbol key is invisible to the BSON serializer; the server looks for it before encoding.
  return { [DEFERRED]: action } as Document;
}

type Mode = "off" | "alwaysOn" | "times" | "skip" | "random";

// Commands answering to several names: a fail point on one name fires for all (mongod's Command::hasAlias).
const ALIASES: string[][] = [
  ["hello", "isMaster", "ismaster"],
  ["findAndModify", "findandmodify"],
  ["buildInfo", "buildinfo"],
];

// Commands that accept a write concern, hence may be given a writeConcernError by the fail point.
const WRITE_CONCERN_COMMANDS = new Set([
  "insert",
  "update",
  "delete",
  "findAndModify",
  "findandmodify",
  "create",
  "drop",
  "dropDatabase",
  "createIndexes",
  "dropIndexes",
  "collMod",
  "renameCollection",
  "commitTransaction",
  "abortTransaction",
  "bulkWrite",
]);

const RETRYABLE_WRITES = new Set(["insert", "update", "delete", "findAndModify", "findandmodify"]);

/**
 * Codes mongod's getMore labels ResumableChangeStreamError on a change stream's cursor (ErrorLabelBuilder):
 * retriable (network, not primary, shutdown, ExceededTimeLimit), shard retargeting (StaleShardVersion,
 * StaleEpoch, StaleConfig), RetryChangeStream and FailedToSatisfyReadPreference.
 */
const RESUMABLE_CHANGE_STREAM_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133]);

const FAIL_MESSAGE = "Failing command via 'failCommand' failpoint";

function sameCommand(a: string, b: string): boolean {
  return a === b || ALIASES.some((group) => group.includes(a) && group.includes(b));
}

function integerField(obj: Document, field: string): number {
  const v = obj[field];
  const n = typeof v === "number" ? v : v && typeof v === "object" && (v as { _bsontype?: string })._bsontype ? Number(String(v)) : NaN;
  if (!Number.isInteger(n)) throw commandError(ErrorCodes.TypeMismatch, `'${field}' must be an integer`);
  return n;
}

/** One fail point's mode, data and entry count, evaluated like mongod's FailPoint. */
class FailPoint {
  mode: Mode = "off";
  value = 0;
  data: Document = {};
  timesEntered = 0;

  /** Parses `{mode, data}` as FailPoint::parseBSON does; returns the entry count before the change. */
  configure(cmd: Document): number {
    const raw = cmd.mode;
    let mode: Mode;
    let value = 0;
    if (raw === undefined) throw commandError(ErrorCodes.IllegalOperation, "When setting a failpoint, you must supply a 'mode'");
    if (typeof raw === "string") {
      if (raw !== "off" && raw !== "alwaysOn") throw commandError(ErrorCodes.BadValue, `unknown mode: ${raw}`);
      mode = raw;
    } else if (raw && typeof raw === "object" && !Array.isArray(raw)) {
      const m = raw as Document;
      if (m.times !== undefined || m.skip !== undefined) {
        const field = m.times !== undefined ? "times" : "skip";
        value = integerField(m, field);
        if (value < 0) throw commandError(ErrorCodes.BadValue, `'${field}' option to 'mode' must be positive`);
        if (value > 2 ** 31 - 1) throw commandError(ErrorCodes.BadValue, `'${field}' option to 'mode' is too large`);
        mode = field;
      } else if (m.activationProbability !== undefined) {
        const p = m.activationProbability;
        if (typeof p !== "number")
          throw commandError(ErrorCodes.TypeMismatch, "the 'activationProbability' option to 'mode' must be a double between 0 and 1");
        if (p < 0 || p > 1) throw commandError(ErrorCodes.BadValue, `activationProbability must be between 0.0 and 1.0; found ${p}`);
        mode = "random";
        value = p;
      } else {
        throw commandError(ErrorCodes.BadValue, "'mode' must be one of 'off', 'alwaysOn', '{times:n}', '{skip:n}' or '{activationProbability:p}'");
      }
    } else {
      throw commandError(ErrorCodes.TypeMismatch, "'mode' must be a string or JSON object");
    }
    let data: Document = {};
    if (cmd.data !== undefined) {
      if (cmd.data === null || typeof cmd.data !== "object" || Array.isArray(cmd.data))
        throw commandError(ErrorCodes.TypeMismatch, "the 'data' option must be a JSON object");
      data = cmd.data as Document;
    }
    const before = this.timesEntered;
    this.mode = mode;
    this.value = value;
    this.data = data;
    return before;
  }

  /** When `applies(data)` holds, decides by the mode whether the point fires this time (counting the entry). */
  fires(applies: (data: Document) => boolean): Document | undefined {
    if (this.mode === "off" || !applies(this.data)) return undefined;
    let fire: boolean;
    switch (this.mode) {
      case "alwaysOn":
        fire = true;
        break;
      case "random":
        fire = Math.random() < this.value;
        break;
      case "times":
        // As mongod: the n-th firing switches the point off ({times: 0} still fires once).
        if (--this.value <= 0) this.mode = "off";
        fire = true;
        break;
      case "skip":
        fire = this.value <= 0 || --this.value < 0;
        break;
    }
    if (!fire) return undefined;
    this.timesEntered++;
    return this.data;
  }
}

export class FailPoints {
  private readonly failCommand = new FailPoint();
  private readonly onPrimaryTransactionalWrite = new FailPoint();
  private readonly failGetMoreAfterCursorCheckout = new FailPoint();
  /** onPrimaryTransactionalWrite fired with closeConnection during the running command. */
  private closeAfterWrite = false;
  /** Client application names announced in each connection's handshake (for the `appName` filter). */
  private readonly appNames = new Map<number, string>();

  /** Whether a fail point may fire on a write command (it then runs in one piece, as the fail point expects). */
  get armedForWrites(): boolean {
    return this.failCommand.mode !== "off" || this.onPrimaryTransactionalWrite.mode !== "off";
  }

  /** The configureFailPoint command: `{count}` is how often the point fired before this change. */
  configure(cmd: Document, ctx: CommandContext): Document {
    if (ctx.db !== "admin") throw commandError(ErrorCodes.Unauthorized, "configureFailPoint may only be run against the admin database.");
    const name = cmd.configureFailPoint;
    const point =
      name === "failCommand"
        ? this.failCommand
        : name === "onPrimaryTransactionalWrite"
          ? this.onPrimaryTransactionalWrite
          : name === "failGetMoreAfterCursorCheckout"
            ? this.failGetMoreAfterCursorCheckout
            : undefined;
    if (!point) throw commandError(ErrorCodes.FailPointSetFailed, `${String(name)} not found`);
    const count = point.configure(cmd);
    return { count: Long.fromNumber(count), ok: 1 };
  }

  /** Runs a command under the failCommand fail point (`execute` runs it and turns its errors into replies). */
  run(cmd: Document, ctx: CommandContext, execute: () => Document): Document {
    const name = Object.keys(cmd)[0] ?? "";
    this.noteHandshake(name, cmd, ctx.connectionId);
    if (name === "configureFailPoint") return execute();
    if (name === "getMore" && this.failGetMoreAfterCursorCheckout.fires(() => true)) {
      const data = this.failGetMoreAfterCursorCheckout.data;
      const code = isInteger(data.errorCode) ? Number(data.errorCode) : 1;
      // As mongod's getMore: an error of a change stream's cursor that a resume can overcome carries the
      // ResumableChangeStreamError label (the driver resumes on it). failCommand errors only carry given labels.
      const resumable = ctx.server.changeStreams.owns(cmd.getMore) && RESUMABLE_CHANGE_STREAM_CODES.has(code);
      return new CommandError(
        code,
        "Hit the 'failGetMoreAfterCursorCheckout' failpoint",
        resumable ? { errorLabels: ["ResumableChangeStreamError"] } : {},
      ).toReply();
    }
    const retryableWrite = RETRYABLE_WRITES.has(name) && cmd.txnNumber !== undefined && cmd.autocommit === undefined;
    if (retryableWrite && this.onPrimaryTransactionalWrite.mode !== "off") {
      // The fail point is checked per statement (transactionalWriteStatement); one that fired with
      // closeConnection closes the connection once the command has stopped.
      this.closeAfterWrite = false;
      const reply = execute();
      return this.closeAfterWrite ? deferred({ afterMs: 0, settle: () => null }) : reply;
    }
    if (this.failCommand.mode === "off") return execute();
    const applies = (data: Document) => this.applies(data, name, cmd, ctx);
    const before = this.failCommand.fires(
      (data) => applies(data) && (data.closeConnection === true || data.blockConnection === true || isInteger(data.errorCode)),
    );
    const finish = (): Document | null => {
      if (before?.closeConnection === true) return null;
      if (before && isInteger(before.errorCode)) return this.errorReply(cmd, before);
      return this.withWriteConcernError(cmd, execute(), applies);
    };
    if (before?.blockConnection === true) {
      const blockTimeMS = before.blockTimeMS;
      if (!isInteger(blockTimeMS))
        return new CommandError(ErrorCodes.InvalidOptions, "must specify 'blockTimeMS' when 'blockConnection' is true").toReply();
      if (Number(blockTimeMS) < 0) return new CommandError(ErrorCodes.InvalidOptions, "'blockTimeMS' must be non-negative").toReply();
      return deferred({ afterMs: Number(blockTimeMS), settle: finish });
    }
    const reply = finish();
    return reply === null ? deferred({ afterMs: 0, settle: () => null }) : reply;
  }

  /**
   * onPrimaryTransactionalWrite, asked before each statement of a retryable write runs (a retry does not ask for
   * the statements it replays), as mongod does: the connection closes unless closeConnection is false;
   * failBeforeCommitExceptionCode fails the statement (it is not applied), else it applies and only the reply is lost.
   */
  transactionalWriteStatement(cmd: Document): StatementFailure | undefined {
    const data = this.onPrimaryTransactionalWrite.fires(() => true);
    if (!data) return undefined;
    const close = data.closeConnection !== false;
    if (close) this.closeAfterWrite = true;
    if (!isInteger(data.failBeforeCommitExceptionCode)) return { close };
    const code = Number(data.failBeforeCommitExceptionCode);
    const labels = serverErrorLabels(cmd, code);
    const error = new CommandError(code, "Failing write via 'onPrimaryTransactionalWrite' failpoint", labels.length ? { errorLabels: labels } : {});
    return { close, error };
  }

  private noteHandshake(name: string, cmd: Document, connectionId: number): void {
    if (!sameCommand(name, "hello")) return;
    const appName = (cmd.client as { application?: { name?: unknown } } | undefined)?.application?.name;
    if (typeof appName === "string") this.appNames.set(connectionId, appName);
  }

  /** mongod's shouldActivateFailCommandFailPoint: command name (or all), appName and namespace filters. */
  private applies(data: Document, name: string, cmd: Document, ctx: CommandContext): boolean {
    if (typeof data.appName === "string" && this.appNames.get(ctx.connectionId) !== data.appName) return false;
    if (typeof data.namespace === "string") {
      const target = cmd[name];
      if (data.namespace !== `${ctx.db}.${typeof target === "string" ? target : "$cmd"}`) return false;
    }
    if (data.failAllCommands !== undefined) return true;
    const names = Array.isArray(data.failCommands) ? data.failCommands : [];
    return names.some((n) => typeof n === "string" && sameCommand(n, name));
  }

  private errorReply(cmd: Document, data: Document): Document {
    const code = Number(data.errorCode);
    const extra: Document = data.errorExtraInfo && typeof data.errorExtraInfo === "object" ? { ...(data.errorExtraInfo as Document) } : {};
    const labels = Array.isArray(data.errorLabels) ? (data.errorLabels as string[]) : serverErrorLabels(cmd, code);
    if (labels.length) extra.errorLabels = labels;
    return new CommandError(code, FAIL_MESSAGE, extra).toReply();
  }

  private withWriteConcernError(cmd: Document, reply: Document, applies: (data: Document) => boolean): Document {
    if (!supportsWriteConcern(cmd)) return reply;
    const data = this.failCommand.fires((d) => applies(d) && d.writeConcernError !== undefined);
    if (!data) return reply;
    const wce = data.writeConcernError as Document;
    const out: Document = { ...reply, writeConcernError: wce };
    const labels = Array.isArray(data.errorLabels)
      ? (data.errorLabels as string[])
      : serverErrorLabels(cmd, typeof reply.code === "number" ? reply.code : undefined, typeof wce?.code === "number" ? wce.code : undefined);
    if (labels.length) out.errorLabels = [...new Set([...((reply.errorLabels as string[]) ?? []), ...labels])];
    return out;
  }
}

function isInteger(v: unknown): boolean {
  if (typeof v === "number") return Number.isInteger(v);
  const t = (v as { _bsontype?: string } | null)?._bsontype;
  return t === "Long" || t === "Int32";
}

function supportsWriteConcern(cmd: Document): boolean {
  const [name] = Object.keys(cmd);
  if (name === undefined) return false;
  if (name === "aggregate" && Array.isArray(cmd.pipeline)) {
    const last = cmd.pipeline[cmd.pipeline.length - 1] as Document | undefined;
    return last !== undefined && ("$out" in last || "$merge" in last);
  }
  return WRITE_CONCERN_COMMANDS.has(name);
}

const perServer = new WeakMap<ServerState, FailPoints>();

/** The fail points of one server instance. */
export function failPointsOf(server: ServerState): FailPoints {
  let points = perServer.get(server);
  if (!points) perServer.set(server, (points = new FailPoints()));
  return points;
}
