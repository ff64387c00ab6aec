// configureFailPoint (a mongod test command, run against admin): see fail-points.ts.
import type { CommandHandler } from "./context.ts";
import { failPointsOf } from "./fail-points.ts";

export const failPointCommands: Record<string, CommandHandler> = {
  configureFailPoint: (cmd, ctx) => failPointsOf(ctx.server).configure(cmd, ctx),
};
