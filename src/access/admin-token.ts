// The admin token (SVC_ADMIN_TOKEN) guards AdminService and the dashboard's operator console. It is compared
// in constant time: both sides are hashed first, which gives equal lengths.
import { createHash, timingSafeEqual } from "node:crypto";

export function tokenDigest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Whether `given` is the admin token, in a time that says nothing about it. */
export function adminTokenMatches(given: string, adminToken: string): boolean {
  return timingSafeEqual(tokenDigest(given), tokenDigest(adminToken));
}
