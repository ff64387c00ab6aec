// Organizations, projects and API keys as AdminService messages.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ApiKeySchema, OrganizationSchema, ProjectSchema, type ApiKey, type Organization, type Project } from "../../gen/svc/admin/v1/admin_pb.ts";
import type { ApiKeyDocument } from "../store/api-key-repository.ts";
import type { OrganizationDocument } from "../store/organization-repository.ts";
import type { ProjectDocument } from "../store/project-repository.ts";

export function organizationMessage(doc: OrganizationDocument): Organization {
  return create(OrganizationSchema, {
    id: doc._id,
    name: doc.name,
    suspended: doc.suspended,
    liveEnabled: doc.live_enabled,
    createdAt: timestampFromDate(doc.created_at),
  });
}

export function projectMessage(doc: ProjectDocument): Project {
  return create(ProjectSchema, {
    id: doc._id,
    organizationId: doc.organization_id,
    name: doc.name,
    withdrawalFeeCents: BigInt(doc.withdrawal_fee_cents ?? 0),
    liveWalletsEnabled: doc.live_wallets_enabled,
    livePhoneVerificationEnabled: doc.live_phone_verification_enabled ?? false,
    liveKycEnabled: doc.live_kyc_enabled ?? false,
    createdAt: timestampFromDate(doc.created_at),
  });
}

export function apiKeyMessage(doc: ApiKeyDocument): ApiKey {
  return create(ApiKeySchema, {
    id: doc._id,
    projectId: doc.project_id,
    livemode: doc.livemode,
    last4: doc.last4,
    ...(doc.rate_limit !== null ? { rateLimit: doc.rate_limit } : {}),
    revoked: doc.revoked_at !== null,
    createdAt: timestampFromDate(doc.created_at),
    ...(doc.revoked_at ? { revokedAt: timestampFromDate(doc.revoked_at) } : {}),
    ...(doc.name ? { name: doc.name } : {}),
    ...(doc.last_used_at ? { lastUsedAt: timestampFromDate(doc.last_used_at) } : {}),
  });
}
