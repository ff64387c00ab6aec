// Client entities' observed events for the unified test runner: command monitoring (with the sensitive-command
// filter), connection pool (CMAP) and topology (SDAM) events, taken from the driver's MongoClient events, and the
// matching of expectEvents, waitForEvent and assertEventCount against them.
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, Document, MongoClient } from "mongodb";

export type EventCategory = "command" | "cmap" | "sdam";

/** One observed event, under the unified format's name for its type (e.g. "connectionReadyEvent"). */
export interface ObservedEvent {
  type: string;
  category: EventCategory;
  event: Document;
}

export interface ClientEntity {
  client: MongoClient;
  events: ObservedEvent[];
  /** Connections currently checked out of the client's pools (assertNumberConnectionsCheckedOut). */
  checkedOut: number;
}

/** Matches an expected value against an actual one, throwing when they differ (the runner's Matcher). */
export type MatchFn = (expected: unknown, actual: unknown, where: string) => void;

const COMMAND_EVENTS: Record<string, string> = {
  commandStartedEvent: "commandStarted",
  commandSucceededEvent: "commandSucceeded",
  commandFailedEvent: "commandFailed",
};

const CMAP_EVENTS: Record<string, string> = {
  poolCreatedEvent: "connectionPoolCreated",
  poolReadyEvent: "connectionPoolReady",
  poolClearedEvent: "connectionPoolCleared",
  poolClosedEvent: "connectionPoolClosed",
  connectionCreatedEvent: "connectionCreated",
  connectionReadyEvent: "connectionReady",
  connectionClosedEvent: "connectionClosed",
  connectionCheckOutStartedEvent: "connectionCheckOutStarted",
  connectionCheckOutFailedEvent: "connectionCheckOutFailed",
  connectionCheckedOutEvent: "connectionCheckedOut",
  connectionCheckedInEvent: "connectionCheckedIn",
};

const SDAM_EVENTS: Record<string, string> = {
  serverDescriptionChangedEvent: "serverDescriptionChanged",
  serverHeartbeatStartedEvent: "serverHeartbeatStarted",
  serverHeartbeatSucceededEvent: "serverHeartbeatSucceeded",
  serverHeartbeatFailedEvent: "serverHeartbeatFailed",
  topologyDescriptionChangedEvent: "topologyDescriptionChanged",
  topologyOpeningEvent: "topologyOpening",
  topologyClosedEvent: "topologyClosed",
  serverOpeningEvent: "serverOpening",
  serverClosedEvent: "serverClosed",
};

function categoryOf(type: string): EventCategory | undefined {
  if (type in COMMAND_EVENTS) return "command";
  if (type in CMAP_EVENTS) return "cmap";
  if (type in SDAM_EVENTS) return "sdam";
  return undefined;
}

// The sensitive commands, whose events drivers redact and test runners ignore (names compared case-insensitively).
const SENSITIVE_COMMANDS = new Set([
  "authenticate",
  "saslstart",
  "saslcontinue",
  "getnonce",
  "createuser",
  "updateuser",
  "copydbgetnonce",
  "copydbsaslstart",
  "copydb",
]);
const HELLO_COMMANDS = new Set(["hello", "ismaster"]);

function isEmpty(doc: unknown): boolean {
  return doc === null || doc === undefined || (typeof doc === "object" && Object.keys(doc).length === 0);
}

/**
 * Whether a command started event is for a sensitive command. hello and legacy hello are sensitive only when they
 * carry speculativeAuthenticate; the driver then redacts the event's command to an empty document, so (as the
 * unified format says) that is inferred from the redaction.
 */
function sensitiveStart(e: CommandStartedEvent): boolean {
  const name = e.commandName.toLowerCase();
  if (SENSITIVE_COMMANDS.has(name)) return true;
  return HELLO_COMMANDS.has(name) && (isEmpty(e.command) || e.command.speculativeAuthenticate !== undefined);
}

/**
 * Creates a client entity recording the events of the types in `spec.observeEvents` (before the client connects,
 * so none is missed). Command events skip configureFailPoint, `ignoreCommandMonitoringEvents` and, unless
 * `observeSensitiveCommands`, sensitive commands. Check-outs are always counted.
 */
export function observeClient(client: MongoClient, spec: Document): ClientEntity {
  const entity: ClientEntity = { client, events: [], checkedOut: 0 };
  const observe = (spec.observeEvents as string[] | undefined) ?? [];
  const unknown = observe.filter((t) => !categoryOf(t));
  if (unknown.length) throw new Error(`unknown observeEvents ${unknown.join(", ")}`);
  const ignored = new Set((spec.ignoreCommandMonitoringEvents as string[] | undefined) ?? []);
  const observeSensitive = spec.observeSensitiveCommands === true;
  // requestIds of sensitive commands, noted at their start (whether or not started events are observed), so their
  // succeeded/failed events, whose replies the driver redacts as well, are known to be sensitive too.
  const sensitive = new Set<number>();
  client.on("commandStarted", (event) => {
    if (sensitiveStart(event)) sensitive.add(event.requestId);
  });

  for (const type of observe) {
    const category = categoryOf(type)!;
    if (category === "command") {
      client.on(COMMAND_EVENTS[type] as "commandStarted", (event: CommandStartedEvent | CommandSucceededEvent | CommandFailedEvent) => {
        if (event.commandName === "configureFailPoint" || ignored.has(event.commandName)) return;
        if (sensitive.has(event.requestId) && !observeSensitive) return;
        entity.events.push({ type, category, event: event as unknown as Document });
      });
    } else {
      const driverName = (category === "cmap" ? CMAP_EVENTS : SDAM_EVENTS)[type];
      client.on(driverName as "connectionReady", (event: unknown) => {
        entity.events.push({ type, category, event: event as Document });
      });
    }
  }
  client.on("connectionCheckedOut", () => entity.checkedOut++);
  client.on("connectionCheckedIn", () => entity.checkedOut--);
  return entity;
}

/**
 * The Node.js driver gives commitTransaction and abortTransaction a write concern of its own making, `wtimeout: 10000`
 * added to the transaction's (sessions.ts in the driver, whenever no timeoutMS is set), which the specification's
 * events do not expect; its own unified runner accepts extra fields there. A `wtimeout` the test does not name is
 * taken out of those two commands' write concern before matching; nothing else is.
 */
function withoutDefaultWtimeout(expected: Document, commandName: string, command: Document): Document {
  if (commandName !== "commitTransaction" && commandName !== "abortTransaction") return command;
  const writeConcern = command.writeConcern as Document | undefined;
  const expectedConcern = expected.writeConcern as Document | undefined;
  if (writeConcern?.wtimeout !== 10000 || (expectedConcern && "wtimeout" in expectedConcern)) return command;
  const { wtimeout: _driverDefault, ...rest } = writeConcern;
  return { ...command, writeConcern: rest };
}

/** Throws unless `actual` is the expected event `{<type>: {<fields>}}` of the unified format. */
export function matchEvent(expected: Document, actual: ObservedEvent, match: MatchFn): void {
  const [type, spec] = Object.entries(expected)[0] as [string, Document];
  if (actual.type !== type) throw new Error(`expected ${type}, got ${describe(actual)}`);
  const e = actual.event;
  const check = (field: string, ok: boolean, what: string) => {
    if (spec[field] !== undefined && !ok) throw new Error(`${type}: ${what}`);
  };
  switch (actual.category) {
    case "command":
      check("commandName", e.commandName === spec.commandName, `expected command ${spec.commandName}, got ${e.commandName}`);
      check("databaseName", e.databaseName === spec.databaseName, `expected database ${spec.databaseName}, got ${e.databaseName}`);
      check("hasServiceId", (e.serviceId != null) === spec.hasServiceId, "serviceId presence");
      check("hasServerConnectionId", (e.serverConnectionId != null) === spec.hasServerConnectionId, "serverConnectionId presence");
      if (spec.command !== undefined) match(spec.command, withoutDefaultWtimeout(spec.command, e.commandName, e.command), "command");
      if (spec.reply !== undefined) match(spec.reply, e.reply, "reply");
      return;
    case "cmap":
      check("hasServiceId", (e.serviceId != null) === spec.hasServiceId, "serviceId presence");
      check("interruptInUseConnections", e.interruptInUseConnections === spec.interruptInUseConnections, "interruptInUseConnections");
      check("reason", e.reason === spec.reason, `expected reason ${spec.reason}, got ${e.reason}`);
      return;
    case "sdam":
      check("awaited", e.awaited === spec.awaited, `expected awaited ${spec.awaited}, got ${e.awaited}`);
      for (const field of ["previousDescription", "newDescription"]) {
        const want = spec[field] as Document | undefined;
        const got = e[field] as Document | undefined;
        if (want?.type !== undefined && got?.type !== want.type) throw new Error(`${type}: expected ${field}.type ${want.type}, got ${got?.type}`);
      }
      return;
  }
}

function describe(e: ObservedEvent): string {
  return e.category === "command" ? `${e.type}:${e.event.commandName}` : e.type;
}

/** Checks one `expectEvents` entry (one client, one event category) against what the client observed. */
export function checkClientEvents(forClient: Document, entity: ClientEntity, match: MatchFn): void {
  const category = (forClient.eventType as EventCategory | undefined) ?? "command";
  if (!["command", "cmap", "sdam"].includes(category)) throw new Error(`unknown eventType ${category}`);
  const actual = entity.events.filter((e) => e.category === category);
  const wanted = forClient.events as Document[];
  if (forClient.ignoreExtraEvents ? actual.length < wanted.length : actual.length !== wanted.length) {
    throw new Error(`expected ${wanted.length} ${category} events, got ${actual.length}: ${actual.map(describe).join(", ")}`);
  }
  wanted.forEach((w, i) => {
    try {
      matchEvent(w, actual[i]!, match);
    } catch (err) {
      throw new Error(`${category} event ${i}: ${(err as Error).message}`);
    }
  });
}

/** How many of the client's observed events match `expected` (waitForEvent, assertEventCount). */
export function countMatching(entity: ClientEntity, expected: Document, match: MatchFn): number {
  return entity.events.filter((e) => {
    try {
      matchEvent(expected, e, match);
      return true;
    } catch {
      return false;
    }
  }).length;
}
