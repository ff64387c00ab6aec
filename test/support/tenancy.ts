// Organizations, projects and keys made through AdminService, for tests that need more than the Default project.
// The one place tests make tenants.
import type { TestService } from "./test-service.ts";

export interface TestProject {
  organizationId: string;
  projectId: string;
}

/**
 * A new project: in a fresh organization (live access as asked) by default, or in `organizationId` (the Default
 * one, say) as that organization stands.
 */
export async function createProject(
  svc: TestService,
  options: { liveEnabled?: boolean; name?: string; organizationId?: string } = {},
): Promise<TestProject> {
  let organizationId = options.organizationId;
  if (organizationId === undefined) {
    const { organization } = await svc.admin.createOrganization({ name: options.name ?? "Test organization" });
    organizationId = organization!.id;
    if (options.liveEnabled) await svc.admin.updateOrganization({ id: organizationId, liveEnabled: true });
  }
  const { project } = await svc.admin.createProject({ organizationId, name: "Test project" });
  return { organizationId, projectId: project!.id };
}

/** A second organization and project with live access, and a sandbox and a live key of it. */
export async function createOtherProject(svc: TestService): Promise<TestProject & { sandboxKey: string; liveKey: string }> {
  const project = await createProject(svc, { liveEnabled: true, name: "Other organization" });
  const sandbox = await createKey(svc, project.projectId);
  const live = await createKey(svc, project.projectId, { livemode: true });
  return { ...project, sandboxKey: sandbox.secret, liveKey: live.secret };
}

/** A new key of the project; answers its secret and id. */
export async function createKey(
  svc: TestService,
  projectId: string,
  options: { livemode?: boolean; rateLimit?: number } = {},
): Promise<{ id: string; secret: string }> {
  const { apiKey, secret } = await svc.admin.createApiKey({
    projectId,
    livemode: options.livemode ?? false,
    ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}),
  });
  return { id: apiKey!.id, secret };
}
