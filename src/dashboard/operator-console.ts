// The operator console (admin token): organizations, their projects and API keys, live enablement, suspension,
// project settings and signup flows. Every change is an AdminService call through the ServiceRegistry; the lists
// come from read-only queries, since AdminService has no list methods.
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { svcError } from "../domain/errors.ts";
import { PROFILE_FIELD_NAMES } from "../domain/signup-flow.ts";
import { signupConfigJson } from "../representations/signup-config.ts";
import { seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { formDecimal, formText } from "./form-fields.ts";
import { html } from "./html.ts";
import { actionButton, jsonBlock, page, postForm, secretOnce, statusTag, table, time } from "./layout.ts";

export function registerOperatorConsole(router: ConsoleRouter): void {
  const { queries } = router.options;
  const O = "operator" as const;

  router.page(O, "/operator", async (ctx) => {
    const after = ctx.query.starting_after ? await queries.findOrganization(ctx.query.starting_after) : null;
    const found = await queries.listOrganizations(100, after);
    return page(
      ctx.shell("Organizations", "organizations"),
      html`<h1>Organizations</h1>
      ${table(
        "Organizations, newest first",
        ["Organization", "Id", "Live", "State", "Created"],
        found.items.map(
          (o) => html`<tr><td><a href="/dashboard/operator/organizations/${seg(o._id)}">${o.name}</a></td><td><code>${o._id}</code></td>
          <td>${o.live_enabled ? statusTag("enabled") : "not enabled"}</td><td>${o.suspended ? statusTag("suspended") : statusTag("active")}</td><td>${time(o.created_at)}</td></tr>`,
        ),
      )}
      ${found.hasMore ? html`<p class="pager"><a href="/dashboard/operator?starting_after=${seg(found.items.at(-1)!._id)}">Older →</a></p>` : ""}
      <section class="card" aria-labelledby="new-org"><h2 id="new-org">New organization</h2>
      ${postForm(ctx.csrf, "/dashboard/operator/organizations", html`<div class="row"><div class="field"><label for="o-name">Name</label><input type="text" id="o-name" name="name" required></div><button type="submit">Create organization</button></div>`, { label: "New organization" })}
      </section>`,
    );
  });

  router.action(
    O,
    "/operator/organizations",
    () => "/dashboard/operator",
    async (ctx) => {
      const answer = await ctx.call(AdminService.method.createOrganization, { name: ctx.form.get("name") ?? "" });
      return { redirect: `/dashboard/operator/organizations/${seg(answer.organization!.id)}`, notice: "Organization created." };
    },
  );

  router.page(O, "/operator/organizations/:id", async (ctx) => {
    const organization = await queries.findOrganization(ctx.params.id!);
    if (!organization) throw svcError("organization_not_found");
    const projects = await queries.projectsOf(organization._id);
    const base = `/dashboard/operator/organizations/${seg(organization._id)}`;
    return page(
      ctx.shell(organization.name, "organizations"),
      html`<h1>${organization.name}</h1>
      <dl class="facts card">
        <dt>Id</dt><dd><code>${organization._id}</code></dd>
        <dt>Live mode</dt><dd>${organization.live_enabled ? statusTag("enabled") : "not enabled"}</dd>
        <dt>State</dt><dd>${organization.suspended ? statusTag("suspended") : statusTag("active")}</dd>
        <dt>Created</dt><dd>${time(organization.created_at)}</dd>
      </dl>
      <div class="actions">
        ${
          organization.live_enabled
            ? actionButton(ctx.csrf, `${base}/live-disable`, "Disable live mode", {
                danger: true,
                confirm: "Disable live mode? Live keys stop working.",
              })
            : actionButton(ctx.csrf, `${base}/live-enable`, "Enable live mode")
        }
        ${
          organization.suspended
            ? actionButton(ctx.csrf, `${base}/unsuspend`, "Unsuspend organization")
            : actionButton(ctx.csrf, `${base}/suspend`, "Suspend organization", {
                danger: true,
                confirm: "Suspend this organization? Its keys stop working.",
              })
        }
      </div>
      <h2>Projects</h2>
      ${table(
        "Projects",
        ["Project", "Id", "Live wallets", "Created"],
        projects.map(
          (p) =>
            html`<tr><td><a href="/dashboard/operator/projects/${seg(p._id)}">${p.name}</a></td><td><code>${p._id}</code></td><td>${p.live_wallets_enabled ? "enabled" : "off"}</td><td>${time(p.created_at)}</td></tr>`,
        ),
      )}
      <section class="card" aria-labelledby="new-project"><h2 id="new-project">New project</h2>
      ${postForm(ctx.csrf, `${base}/projects`, html`<div class="row"><div class="field"><label for="p-name">Name</label><input type="text" id="p-name" name="name" required></div><button type="submit">Create project</button></div>`, { label: "New project" })}
      </section>`,
    );
  });

  const orgBack = (ctx: ConsoleContext) => `/dashboard/operator/organizations/${seg(ctx.params.id!)}`;
  const orgChanges = [
    ["live-enable", { liveEnabled: true }, "Live mode enabled."],
    ["live-disable", { liveEnabled: false }, "Live mode disabled."],
    ["suspend", { suspended: true }, "Organization suspended: its keys are refused."],
    ["unsuspend", { suspended: false }, "Organization unsuspended."],
  ] as const;
  for (const [verb, change, notice] of orgChanges) {
    router.action(O, `/operator/organizations/:id/${verb}`, orgBack, async (ctx) => {
      await ctx.call(AdminService.method.updateOrganization, { id: ctx.params.id!, ...change });
      return { redirect: orgBack(ctx), notice };
    });
  }
  router.action(O, "/operator/organizations/:id/projects", orgBack, async (ctx) => {
    const answer = await ctx.call(AdminService.method.createProject, { organizationId: ctx.params.id!, name: ctx.form.get("name") ?? "" });
    return { redirect: `/dashboard/operator/projects/${seg(answer.project!.id)}`, notice: "Project created." };
  });

  async function projectPage(ctx: ConsoleContext, id: string, notice: ReturnType<typeof html> | null = null): Promise<string> {
    const project = await queries.findProject(id);
    if (!project) throw svcError("project_not_found");
    const keys = await queries.keysOf(project._id);
    const base = `/dashboard/operator/projects/${seg(project._id)}`;
    const configs = await Promise.all(
      [false, true].map(async (livemode) => {
        // The signup flow as the project's clients see it (UsersService.GetSignupConfig, under that environment).
        const principal = { apiKeyId: "dashboard", projectId: project._id, organizationId: project.organization_id, livemode, rateLimit: 0 };
        return signupConfigJson((await ctx.callAs(principal, UsersService.method.getSignupConfig, {})).signupConfig!);
      }),
    );
    return page(
      ctx.shell(project.name, "organizations"),
      html`<h1>Project ${project.name}</h1>
      ${notice}
      <p><a href="/dashboard/operator/organizations/${seg(project.organization_id)}">← Organization</a></p>
      <dl class="facts card"><dt>Id</dt><dd><code>${project._id}</code></dd><dt>Live wallets</dt><dd>${project.live_wallets_enabled ? "enabled" : "off"}</dd></dl>
      <div class="actions">${
        project.live_wallets_enabled
          ? actionButton(ctx.csrf, `${base}/live-wallets-off`, "Turn live wallets off", { danger: true })
          : actionButton(ctx.csrf, `${base}/live-wallets-on`, "Turn live wallets on")
      }</div>
      <h2>API keys</h2>
      ${table(
        "API keys, newest first",
        ["Key", "Name", "Environment", "Rate limit", "State", "Last used", "Created", ""],
        keys.map(
          (
            k,
          ) => html`<tr class="api-key" data-key-id="${k._id}"><td><code>…${k.last4}</code> <span class="muted">${k._id}</span></td><td class="key-name">${k.name ?? ""}</td><td>${k.livemode ? "live" : "sandbox"}</td>
          <td>${k.rate_limit ?? "default"}</td><td>${k.revoked_at ? html`${statusTag("revoked")} ${time(k.revoked_at)}` : statusTag("active")}</td>
          <td class="key-last-used">${k.last_used_at ? time(k.last_used_at) : html`<span class="muted">never</span>`}</td><td>${time(k.created_at)}</td>
          <td>${k.revoked_at ? "" : actionButton(ctx.csrf, `${base}/keys/${seg(k._id)}/revoke`, "Revoke", { danger: true, confirm: "Revoke this key? Requests with it are refused at once." })}</td></tr>`,
        ),
      )}
      <section class="card" aria-labelledby="new-key"><h2 id="new-key">Issue a key</h2>
      ${postForm(
        ctx.csrf,
        `${base}/keys`,
        html`<div class="row"><div class="field"><label for="k-name">Name (who or what uses it)</label><input type="text" id="k-name" name="name" maxlength="100"></div>
        <div class="field"><label for="k-env">Environment</label><select id="k-env" name="livemode"><option value="false">sandbox</option><option value="true">live</option></select></div>
        <div class="field"><label for="k-limit">Rate limit (requests per minute; empty: default)</label><input type="number" id="k-limit" name="rate_limit" min="1"></div>
        <button type="submit">Issue key</button></div>`,
        { label: "Issue a key" },
      )}</section>
      <h2>Signup flows</h2>
      ${[false, true].map(
        (livemode, i) => html`<section class="card" aria-labelledby="flow-${i}"><h3 id="flow-${i}">${livemode ? "Live" : "Sandbox"}</h3>
        ${jsonBlock(`${livemode ? "Live" : "Sandbox"} signup config`, configs[i])}
        ${postForm(
          ctx.csrf,
          `${base}/signup-flow`,
          html`<input type="hidden" name="livemode" value="${String(livemode)}">
          <div class="table-wrap"><table><caption>Modules</caption><thead><tr><th scope="col">Module</th><th scope="col">Collected</th><th scope="col">Required</th></tr></thead><tbody>
          ${PROFILE_FIELD_NAMES.map((name) => {
            const module = (configs[i]!.modules as Record<string, { enabled: boolean; required: boolean }> | undefined)?.[name];
            return html`<tr><td>${name}</td><td><input type="checkbox" name="enabled" value="${name}" aria-label="${name} collected (${livemode ? "live" : "sandbox"})"${module?.enabled ? html` checked` : ""}></td>
            <td><input type="checkbox" name="required" value="${name}" aria-label="${name} required (${livemode ? "live" : "sandbox"})"${module?.required ? html` checked` : ""}></td></tr>`;
          })}</tbody></table></div>
          <div class="row"><div class="field"><label for="min-age-${i}">Minimum age (empty: none)</label><input type="number" id="min-age-${i}" name="min_age" min="0" value="${configs[i]!.min_age ?? ""}"></div>
          <div class="field"><label for="countries-${i}">Allowed countries (comma-separated; empty: any)</label><input type="text" id="countries-${i}" name="allowed_countries" value="${((configs[i]!.allowed_countries as string[] | undefined) ?? []).join(", ")}"></div>
          <button type="submit">Publish ${livemode ? "live" : "sandbox"} flow</button></div>`,
          { label: `Publish the ${livemode ? "live" : "sandbox"} signup flow` },
        )}</section>`,
      )}`,
    );
  }

  router.page(O, "/operator/projects/:id", (ctx) => projectPage(ctx, ctx.params.id!));
  const projectBack = (ctx: ConsoleContext) => `/dashboard/operator/projects/${seg(ctx.params.id!)}`;
  for (const [verb, on] of [
    ["live-wallets-on", true],
    ["live-wallets-off", false],
  ] as const) {
    router.action(O, `/operator/projects/:id/${verb}`, projectBack, async (ctx) => {
      await ctx.call(AdminService.method.updateProject, { id: ctx.params.id!, liveWalletsEnabled: on });
      return { redirect: projectBack(ctx), notice: on ? "Live wallets on." : "Live wallets off." };
    });
  }
  router.action(O, "/operator/projects/:id/keys", projectBack, async (ctx) => {
    const rateLimit = formDecimal(ctx, "rate_limit", true);
    const name = formText(ctx, "name");
    const answer = await ctx.call(AdminService.method.createApiKey, {
      projectId: ctx.params.id!,
      livemode: ctx.form.get("livemode") === "true",
      ...(rateLimit !== undefined ? { rateLimit } : {}),
      ...(name !== undefined ? { name } : {}),
    });
    const label = `New ${answer.apiKey!.livemode ? "live" : "sandbox"} API key`;
    // A second post of the same form replays the creation without its secret, which is never stored.
    const shown =
      answer.secret !== ""
        ? secretOnce("new-key-secret", label, answer.secret)
        : html`<section class="secret" role="status"><h2>${label}</h2><p>This form already created key <code>${answer.apiKey!.id}</code>; its
          secret was shown once, when it was created. Revoke the key if the secret was not kept.</p></section>`;
    return { render: await projectPage(ctx, ctx.params.id!, shown) };
  });
  router.action(O, "/operator/projects/:id/keys/:key/revoke", projectBack, async (ctx) => {
    await ctx.call(AdminService.method.revokeApiKey, { id: ctx.params.key! });
    return { redirect: projectBack(ctx), notice: "Key revoked: requests with it are refused." };
  });
  router.action(O, "/operator/projects/:id/signup-flow", projectBack, async (ctx) => {
    const enabled = new Set(ctx.form.getAll("enabled"));
    const required = new Set(ctx.form.getAll("required"));
    const minAgeNumber = formDecimal(ctx, "min_age", true);
    await ctx.call(AdminService.method.publishSignupFlow, {
      projectId: ctx.params.id!,
      livemode: ctx.form.get("livemode") === "true",
      modules: PROFILE_FIELD_NAMES.map((name) => ({ name, enabled: enabled.has(name) || required.has(name), required: required.has(name) })),
      ...(minAgeNumber !== undefined ? { minAge: minAgeNumber } : {}),
      allowedCountries: (ctx.form.get("allowed_countries") ?? "")
        .split(",")
        .map((c) => c.trim())
        .filter((c) => c !== ""),
    });
    return { redirect: projectBack(ctx), notice: "Signup flow published." };
  });
}
