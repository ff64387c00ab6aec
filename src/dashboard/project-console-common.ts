// What every section of the project console reads the same way: the page size of its lists, a timestamp as a
// date, and the session's tenant scope (a project session always has one; its absence is a refused key).
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { svcError } from "../domain/errors.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { ConsoleContext } from "./console-router.ts";

export const PAGE_SIZE = 25;

export function dateOf(value: Timestamp | undefined): Date | null {
  return value ? timestampDate(value) : null;
}

export function scopeOf(ctx: ConsoleContext): TenantScope {
  if (!ctx.scope) throw svcError("missing_api_key");
  return ctx.scope;
}
