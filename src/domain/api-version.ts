// API versions. There is one so far; a request may name it with `Svc-Version`.
export const API_VERSIONS = ["2026-11-20"] as const;
export const LATEST_API_VERSION = API_VERSIONS[API_VERSIONS.length - 1]!;
export const VERSION_HEADER = "svc-version";

export function isKnownApiVersion(value: string): boolean {
  return (API_VERSIONS as readonly string[]).includes(value);
}
