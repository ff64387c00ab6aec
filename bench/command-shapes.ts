// What a process asks the database, counted by command and the shape of what it asks (filter keys, sort,
// upsert), without values: the driver's command monitoring, read by the benchmarks that report commands per item.
import type { CommandStartedEvent, MongoClient } from "mongodb";

/** Ids in field paths (`ledger.inflight.txn_...`), so that the same query of different transactions counts as one. */
const ID_IN_PATH = /\b[a-z]{2,5}_[A-Za-z0-9]{16,}\b/g;

/** A command's name and the shape of what it asks (filter keys, sort, upsert), without values. */
export function commandShape(event: CommandStartedEvent): string {
  return rawShape(event).replace(ID_IN_PATH, "<id>");
}

function rawShape(event: CommandStartedEvent): string {
  const c = event.command;
  const shape = (v: unknown): string => {
    if (v === null || typeof v !== "object" || v instanceof Date || Array.isArray(v) || (v as { _bsontype?: string })._bsontype) return "";
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) =>
        k.startsWith("$") || (x && typeof x === "object" && !(x instanceof Date) && !(x as { _bsontype?: string })._bsontype)
          ? `${k}${Array.isArray(x) ? (x.some((e) => shape(e) !== "") ? `[${x.map(shape).join(",")}]` : "[...]") : shape(x)}`
          : k,
      )
      .join(", ")}}`;
  };
  switch (event.commandName) {
    case "findAndModify":
      return `findAndModify ${c.findAndModify} ${shape(c.query)}${c.sort ? ` sort ${shape(c.sort)}` : ""}${c.upsert ? " upsert" : ""}`;
    case "update":
      return `update ${c.update} ${shape(c.updates?.[0]?.q)}${c.updates?.[0]?.upsert ? " upsert" : ""}`;
    case "delete":
      return `delete ${c.delete} ${shape(c.deletes?.[0]?.q)}`;
    case "find":
      return `find ${c.find} ${shape(c.filter)}`;
    case "getMore":
      return `getMore ${c.collection}`;
    case "aggregate":
      return `aggregate ${c.aggregate}`;
    default:
      return `${event.commandName} ${String(c[event.commandName])}`;
  }
}

/** Commands the driver sends on its own (monitoring, sessions), not asked by the code measured. */
const DRIVER_COMMANDS = new Set(["hello", "ismaster", "endSessions"]);

/**
 * Counts the commands `client` sends (it must be made with `monitorCommands: true`) by shape until stopped;
 * `take` answers the counts since the last take.
 */
export function countCommands(client: MongoClient): { take(): Map<string, number>; stop(): void } {
  let counts = new Map<string, number>();
  const count = (event: CommandStartedEvent) => {
    if (DRIVER_COMMANDS.has(event.commandName)) return;
    const key = commandShape(event);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  client.on("commandStarted", count);
  return {
    take() {
      const taken = counts;
      counts = new Map();
      return taken;
    },
    stop: () => client.off("commandStarted", count),
  };
}

/**
 * Counts the documents each write command asks to insert, update or delete, by command and collection (the driver's
 * command monitoring, as `countCommands`); `take` answers the counts since the last take.
 */
export function countWrittenDocuments(client: MongoClient): { take(): Map<string, number> } {
  let counts = new Map<string, number>();
  const statements: Record<string, string> = { insert: "documents", update: "updates", delete: "deletes" };
  client.on("commandStarted", (event: CommandStartedEvent) => {
    const field = statements[event.commandName];
    if (field === undefined && event.commandName !== "findAndModify") return;
    const key = `${event.commandName} ${String(event.command[event.commandName])}`;
    const documents = field === undefined ? 1 : ((event.command[field] as unknown[] | undefined)?.length ?? 0);
    counts.set(key, (counts.get(key) ?? 0) + documents);
  });
  return {
    take() {
      const taken = counts;
      counts = new Map();
      return taken;
    },
  };
}

/**
 * Counted commands as a titled Markdown table, per `items` of `unit` (a job, a request), most frequent first;
 * `counted` names what was counted and by what (the documents of countWrittenDocuments, by command and collection).
 */
export function commandTable(
  title: string,
  commands: Map<string, number>,
  items: number,
  unit: string,
  counted: { what: string; by: string } = { what: "commands", by: "command (filter shape)" },
): string[] {
  const per = (n: number) => Math.round((n / Math.max(1, items)) * 100) / 100;
  return [
    `${title} (${per([...commands.values()].reduce((a, b) => a + b, 0))} ${counted.what} per ${unit}):`,
    "",
    `| ${counted.by} | count | per ${unit} |`,
    "|---|---|---|",
    ...[...commands.entries()].sort((a, b) => b[1] - a[1]).map(([shape, n]) => `| \`${shape}\` | ${n} | ${per(n)} |`),
    "",
  ];
}
