// What every section of the project console reads the same way: the page size of its lists, a timestamp as a
// date, the session's tenant scope (a project session always has one; its absence is a refused key), and an
// action on a user posted from two pages.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { svcError } from "../domain/errors.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { type ActionOutcome, type ConsoleContext, type ConsoleRouter, seg } from "./console-router.ts";

export const PAGE_SIZE = 25;

export function dateOf(value: Timestamp | undefined): Date | null {
  return value ? timestampDate(value) : null;
}

export function scopeOf(ctx: ConsoleContext): TenantScope {
  if (!ctx.scope) throw svcError("missing_api_key");
  return ctx.scope;
}

/**
 * An action on a user, posted from the user's page (`/users/:id/<name>`, back to it) and from the sandbox page's
 * form (`/sandbox/<name>`, the user in its user_id field, back to the sandbox page).
 */
export function userAction(router: ConsoleRouter, name: string, handler: (ctx: ConsoleContext, userId: string) => Promise<ActionOutcome>): void {
  router.action(
    "project",
    `/users/:id/${name}`,
    (ctx) => `/dashboard/users/${seg(ctx.params.id!)}`,
    (ctx) => handler(ctx, ctx.params.id!),
  );
  router.action(
    "project",
    `/sandbox/${name}`,
    () => "/dashboard/sandbox",
    (ctx) => handler(ctx, (ctx.form.get("user_id") ?? "").trim()),
  );
}
