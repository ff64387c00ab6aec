// Agenda extends its `debug` loggers on every job run (several times per run), and `debug` decides for each new
// logger whether to colour its output by probing stderr with an isatty system call, unless DEBUG_COLORS has
// decided it: a few percent of a worker's CPU under load. The probe is made once here, for Agenda's copy of
// `debug`, and DEBUG_COLORS still wins.
import { createRequire } from "node:module";
import { isatty } from "node:tty";

const agendaDebug = createRequire(import.meta.resolve("agenda"))("debug") as { inspectOpts: Record<string, unknown> };
if (!("colors" in agendaDebug.inspectOpts)) agendaDebug.inspectOpts.colors = isatty(process.stderr.fd);
