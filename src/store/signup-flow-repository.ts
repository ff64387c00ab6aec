// The published signup flow of each project and environment.
import type { Collection, Db } from "mongodb";
import { UNPUBLISHED_SIGNUP_FLOW, type SignupFlow } from "../domain/signup-flow.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";

interface SignupFlowDocument extends SignupFlow {
  _id: string;
}

function flowId(scope: TenantScope): string {
  return `${scope.projectId}|${scope.livemode ? "live" : "test"}`;
}

export class SignupFlowRepository {
  private readonly collection: Collection<SignupFlowDocument>;

  constructor(db: Db) {
    this.collection = db.collection<SignupFlowDocument>("signup_flows");
  }

  async find(scope: TenantScope): Promise<SignupFlow> {
    const doc = await this.collection.findOne({ _id: flowId(scope) });
    if (!doc) return UNPUBLISHED_SIGNUP_FLOW;
    const { _id, ...flow } = doc;
    return flow;
  }

  /** Publishing replaces the whole flow. */
  async replace(scope: TenantScope, flow: SignupFlow): Promise<void> {
    await this.collection.replaceOne({ _id: flowId(scope) }, { ...flow }, { upsert: true });
  }
}
