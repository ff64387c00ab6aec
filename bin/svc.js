#!/usr/bin/env node
// The `svc` command: the CLI in src/cli is TypeScript, run through tsx (no build step, no global install).
import { register } from "tsx/esm/api";

register();
await import("../src/cli/svc.ts");
