// Per-tenant settings read on every creation (signup flow, project options), cached for a moment. Changes
// made through this process clear the cache at once; another instance's changes are seen within the TTL.
import type { Clock } from "../domain/clock.ts";
import type { SignupFlow } from "../domain/signup-flow.ts";
import type { ProjectDocument, ProjectRepository } from "../store/project-repository.ts";
import type { SignupFlowRepository } from "../store/signup-flow-repository.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { TtlCache } from "../lib/ttl-cache.ts";

export class TenantSettings {
  private readonly flows: TtlCache<string, SignupFlow>;
  private readonly projectCache: TtlCache<string, ProjectDocument | null>;

  constructor(
    private readonly projects: ProjectRepository,
    private readonly signupFlows: SignupFlowRepository,
    private readonly clock: Clock,
    ttlMs: number,
  ) {
    this.flows = new TtlCache(ttlMs);
    this.projectCache = new TtlCache(ttlMs);
  }

  signupFlow(scope: TenantScope): Promise<SignupFlow> {
    const key = `${scope.projectId}|${scope.livemode}`;
    return this.flows.getOrLoad(key, this.clock().getTime(), () => this.signupFlows.find(scope));
  }

  project(id: string): Promise<ProjectDocument | null> {
    return this.projectCache.getOrLoad(id, this.clock().getTime(), () => this.projects.findById(id));
  }

  async publishSignupFlow(scope: TenantScope, flow: SignupFlow): Promise<void> {
    await this.signupFlows.replace(scope, flow);
    this.flows.clear();
  }

  /** Called after a project changes in this process. */
  projectChanged(): void {
    this.projectCache.clear();
  }
}
