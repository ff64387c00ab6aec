// The tenant every read and write belongs to: a project and one of its environments (sandbox or live). A
// record of another scope is never seen: lookups across scopes answer not found.

export interface TenantScope {
  projectId: string;
  livemode: boolean;
}
