// Preloaded with `node --import`: appends the URL of every module the process (and its worker threads) loads to
// the file named by SVC_MODULE_TRACE, so a test can tell which parts of the tree a start loaded.
import { register } from "node:module";

if (process.env.SVC_MODULE_TRACE) register("./module-trace-hooks.mjs", import.meta.url, { data: { file: process.env.SVC_MODULE_TRACE } });
