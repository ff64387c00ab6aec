// Resolves a webhook host and vets every address it resolves to, so a delivery connects only to an address
// that passed the rules (DNS rebinding and names pointing inside the network are refused).
import { lookup as systemLookup } from "node:dns/promises";
import { isIP, isIPv4 } from "node:net";
import { svcError } from "../domain/errors.ts";
import { describeRefusedAddress, type CheckedWebhookUrl } from "../domain/webhook-url.ts";

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all of its addresses; injectable so tests need no DNS. */
export type LookupAll = (hostname: string) => Promise<ResolvedAddress[]>;

export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

/** The network failures of a delivery attempt (docs/contract.md, Attempt errors, without http_). */
export type DeliveryFailureCode =
  | "timeout"
  | "connection_refused"
  | "connection_reset"
  | "dns_error"
  | "tls_error"
  | "host_unreachable"
  | "ssrf_blocked"
  | "connection_error";

export class DeliveryFailure extends Error {
  readonly code: DeliveryFailureCode;
  /** For `ssrf_blocked`: which rule refused, naming the refused address class, without the resolved address. */
  readonly detail: string | null;

  constructor(code: DeliveryFailureCode, message: string, detail: string | null = null) {
    super(message);
    this.name = "DeliveryFailure";
    this.code = code;
    this.detail = detail;
  }
}

export interface VettingOptions {
  livemode: boolean;
  lookup?: LookupAll;
}

const defaultLookup: LookupAll = (hostname) => systemLookup(hostname, { all: true, verbatim: true });

/** Sandbox endpoints on these hosts may reach loopback addresses, and only loopback ones. */
function isSandboxLoopbackHost(checked: CheckedWebhookUrl, livemode: boolean): boolean {
  if (livemode) return false;
  return checked.literalAddress === null
    ? checked.hostname === "localhost"
    : checked.literalAddress === "127.0.0.1" || checked.literalAddress === "::1";
}

function isLoopback(address: string): boolean {
  return address === "::1" || (isIPv4(address) && address.startsWith("127."));
}

/** The first address that may not be connected to, with the reason, or null when all are allowed. */
function firstRefused(addresses: readonly string[], loopbackAllowed: boolean): { address: string; reason: string } | null {
  for (const address of addresses) {
    if (loopbackAllowed && isLoopback(address)) continue;
    const reason = describeRefusedAddress(address);
    if (reason !== null) return { address, reason };
  }
  return null;
}

function ipFamilyOf(address: string): 4 | 6 {
  return isIP(address) === 6 ? 6 : 4;
}

/**
 * Resolves the host of an already checked URL and returns the one address to connect to. Refuses
 * (`ssrf_blocked`) when ANY resolved address is refused, since an attacker controlling DNS can pick which one
 * a later connection would use; fails with `dns_error` when the name does not resolve.
 */
export async function vetHost(checked: CheckedWebhookUrl, options: VettingOptions): Promise<VettedAddress> {
  const loopbackAllowed = isSandboxLoopbackHost(checked, options.livemode);
  let addresses: string[];
  if (checked.literalAddress !== null) {
    addresses = [checked.literalAddress];
  } else {
    let resolved: ResolvedAddress[];
    try {
      resolved = await (options.lookup ?? defaultLookup)(checked.hostname);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      throw new DeliveryFailure("dns_error", `${checked.hostname} did not resolve${typeof code === "string" ? ` (${code})` : ""}.`);
    }
    if (resolved.length === 0) throw new DeliveryFailure("dns_error", `${checked.hostname} resolved to no address.`);
    addresses = resolved.map((entry) => entry.address);
  }
  const refused = firstRefused(addresses, loopbackAllowed);
  if (refused !== null) {
    throw new DeliveryFailure(
      "ssrf_blocked",
      `${checked.hostname} resolves to ${refused.address}, ${refused.reason}.`,
      `${checked.hostname} resolves to ${refused.reason}.`,
    );
  }
  const address = addresses[0]!;
  return { address, family: ipFamilyOf(address) };
}

/**
 * The creation and update check: a name that resolves to a refused address is refused as
 * `invalid_webhook_url` (param `url`). A name that does not resolve (yet) is accepted; every delivery
 * resolves and vets again.
 */
export async function assertResolvableHostAllowed(checked: CheckedWebhookUrl, options: VettingOptions): Promise<void> {
  try {
    await vetHost(checked, options);
  } catch (error) {
    if (error instanceof DeliveryFailure && error.code === "ssrf_blocked") {
      throw svcError("invalid_webhook_url", `The URL host ${error.message}`, { param: "url" });
    }
    if (error instanceof DeliveryFailure && error.code === "dns_error") return;
    throw error;
  }
}
