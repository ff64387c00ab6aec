// The `svc` command line (package bin, run through tsx): `svc <command> [options]`, one file per command.
// Failures print one line to standard error and exit with status 1.
import { type CliCommand, say } from "./command.ts";
import { CliError, CONNECTION_HELP } from "./connection.ts";
import { eventsCommand } from "./events.ts";
import { listenCommand } from "./listen.ts";
import { logsCommand } from "./logs.ts";
import { triggerCommand } from "./trigger.ts";

const COMMANDS: readonly CliCommand[] = [listenCommand, triggerCommand, eventsCommand, logsCommand];

function usage(): string {
  return `Usage: svc <command> [options]   (svc <command> --help for its own)

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`).join("\n")}

${CONNECTION_HELP}`;
}

async function main(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    say(usage());
    return name === undefined ? 1 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command)
    throw new CliError(`unknown command ${JSON.stringify(name)}; the commands are ${COMMANDS.map((c) => c.name).join(", ")} (svc --help)`);
  return command.run(rest, process.env);
}

/** Exits once what was written to standard output has been flushed (a pipe would otherwise lose its tail). */
function exit(status: number): void {
  process.stdout.write("", () => process.exit(status));
}

main(process.argv.slice(2)).then(
  (status) => exit(status),
  (error: unknown) => {
    const code = (error as { code?: string }).code;
    // parseArgs refuses unknown options and missing values with its own clear message.
    if (error instanceof CliError || (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"))) {
      process.stderr.write(`svc: ${(error as Error).message}\n`);
    } else {
      process.stderr.write(`svc: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    exit(1);
  },
);
