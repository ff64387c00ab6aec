// commitTransaction and abortTransaction outside a transaction (without `autocommit: false`; a transaction's own
// are run by transactions.ts), and the server parameter transactions have: transactionLifetimeLimitSeconds through
// setParameter / getParameter (admin only, as mongod).
import type { Document } from "bson";
import type { CommandContext, CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";

const LIFETIME = "transactionLifetimeLimitSeconds";
const PARAMETER_FIELDS = new Set([
  "setParameter",
  "getParameter",
  "comment",
  "lsid",
  "$db",
  "$clusterTime",
  "$readPreference",
  "apiVersion",
  "apiStrict",
  "apiDeprecationErrors",
]);

function outsideTransaction(name: string): CommandHandler {
  return () => {
    throw commandError(125, `${name} must be run within a transaction`, { codeName: "CommandFailed" });
  };
}

function adminOnly(name: string, ctx: CommandContext): void {
  if (ctx.db !== "admin") throw commandError(ErrorCodes.Unauthorized, `${name} may only be run against the admin database.`);
}

function parameterNames(cmd: Document): string[] {
  return Object.keys(cmd).filter((field) => !PARAMETER_FIELDS.has(field));
}

export const transactionCommands: Record<string, CommandHandler> = {
  commitTransaction: outsideTransaction("commitTransaction"),
  abortTransaction: outsideTransaction("abortTransaction"),

  setParameter: (cmd, ctx) => {
    adminOnly("setParameter", ctx);
    const names = parameterNames(cmd);
    if (names.length === 0) throw commandError(ErrorCodes.InvalidOptions, "no option found to set, use help:true to see options ");
    const unknown = names.find((n) => n !== LIFETIME);
    if (unknown) throw commandError(ErrorCodes.InvalidOptions, `attempted to set unrecognized parameter [${unknown}], use help:true to see options `);
    const seconds = Number(cmd[LIFETIME]);
    if (!Number.isInteger(seconds) || seconds < 1) throw commandError(ErrorCodes.BadValue, `${LIFETIME} must be greater than or equal to 1s`);
    const transactions = ctx.server.transactions;
    const was = transactions.lifetimeLimitSeconds;
    transactions.lifetimeLimitSeconds = seconds;
    return { was, ok: 1 };
  },

  getParameter: (cmd, ctx) => {
    adminOnly("getParameter", ctx);
    const names = parameterNames(cmd);
    const all = cmd.getParameter === "*";
    if (!all && (names.length === 0 || names.some((n) => n !== LIFETIME))) throw commandError(ErrorCodes.InvalidOptions, "no option found to get");
    return { [LIFETIME]: ctx.server.transactions.lifetimeLimitSeconds, ok: 1 };
  },
};
