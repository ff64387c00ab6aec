// What each `svc` command is: one file per command, listed by src/cli/svc.ts.

export interface CliCommand {
  name: string;
  /** One line for `svc --help`. */
  summary: string;
  /** The command's own `--help`. */
  help: string;
  /** Runs with the arguments after the command's name; answers the exit status. */
  run(args: string[], env: NodeJS.ProcessEnv): Promise<number>;
}

/** Writes one line to standard output. */
export function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** The local time of a printed line, `YYYY-MM-DD HH:MM:SS`. */
export function timestamp(date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
