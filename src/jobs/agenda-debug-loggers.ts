// Agenda's `debug` loggers, made cheap for a worker under load. Agenda extends its loggers on every job run (several
// times per run: `log.extend("shouldLock")(...)` and the like), and `debug` builds a new logger for each extension:
// closures, a property definition and a colour choice, which probes stderr with an isatty system call unless
// DEBUG_COLORS decided it. Together a few percent of a worker's CPU. Here, for Agenda's copy of `debug`: the probe
// is made once (DEBUG_COLORS still wins), and each logger keeps its extensions, so a namespace is built once per
// process. Enabling or disabling namespaces later still applies (each logger asks `debug` whether it is enabled).
// Imported before anything of Agenda's, so that the loggers Agenda makes when it loads are among them.
import { createRequire } from "node:module";
import { isatty } from "node:tty";

interface DebugLogger {
  (...args: unknown[]): void;
  extend: (namespace: string, delimiter?: string) => DebugLogger;
}
interface DebugModule {
  (namespace: string): DebugLogger;
  inspectOpts: Record<string, unknown>;
  init?: (logger: DebugLogger) => void;
}

const agendaDebug = createRequire(import.meta.resolve("agenda"))("debug") as DebugModule;
if (!("colors" in agendaDebug.inspectOpts)) agendaDebug.inspectOpts.colors = isatty(process.stderr.fd);

const buildExtension = agendaDebug("agenda").extend;
const extensions = new WeakMap<DebugLogger, Map<string, DebugLogger>>();
/** `extend`, answering the logger it built for the same namespace before. */
function keptExtension(this: DebugLogger, namespace: string, delimiter?: string): DebugLogger {
  let built = extensions.get(this);
  if (!built) extensions.set(this, (built = new Map()));
  const key = `${delimiter ?? ":"}\0${namespace}`;
  let logger = built.get(key);
  if (!logger) built.set(key, (logger = buildExtension.call(this, namespace, delimiter)));
  return logger;
}
const init = agendaDebug.init;
agendaDebug.init = (logger) => {
  init?.(logger);
  logger.extend = keptExtension;
};
