// Organizations, projects and keys made through AdminService, for tests that need more than the Default project.
import type { TestService } from "./test-service.ts";

export interface TestProject {
  organizationId: string;
  projectId: string;
}

/** A fresh organization (live access as asked) with one project. */
export async function createProject(svc: TestService, options: { liveEnabled?: boolean; name?: string } = {}): Promise<TestProject> {
  const { organization } = await svc.admin.createOrganization({ name: options.name ?? "Test organization" });
  if (options.liveEnabled) await svc.admin.updateOrganization({ id: organization!.id, liveEnabled: true });
  const { project } = await svc.admin.createProject({ organizationId: organization!.id, name: "Test project" });
  return { organizationId: organization!.id, projectId: project!.id };
}

/** A new key of the project; answers its secret and id. */
export async function createKey(svc: TestService, projectId: string, options: { livemode?: boolean; rateLimit?: number } = {}): Promise<{ id: string; secret: string }> {
  const { apiKey, secret } = await svc.admin.createApiKey({
    projectId,
    livemode: options.livemode ?? false,
    ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}),
  });
  return { id: apiKey!.id, secret };
}
