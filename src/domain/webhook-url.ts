// The static webhook URL rules (docs/contract.md, URL rules): what a URL may
// name before any DNS resolution. Pure: no I/O. Resolved addresses are vetted with `isRefusedAddress`.
import { isIPv4, isIPv6 } from "node:net";
import { svcError } from "./errors.ts";

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface CheckedWebhookUrl {
  /**
   * Normalised, so that spellings of one address are one endpoint: lowercase scheme and host, default port,
   * fragment, empty query and the host's trailing dot dropped, percent-encoded unreserved characters decoded and
   * the hex digits of other escapes uppercased (RFC 3986 section 6.2.2), on the WHATWG serialisation.
   */
  url: string;
  /** Host name (without a trailing dot) or IP literal, without IPv6 brackets. */
  hostname: string;
  port: number;
  /** The canonical address when the host is an IP literal, otherwise null. */
  literalAddress: string | null;
}

/** Ports of internal services a webhook must never be aimed at, with the service named in the refusal. */
const SENSITIVE_PORTS: ReadonlyMap<number, string> = new Map([
  [22, "SSH"],
  [23, "Telnet"],
  [25, "SMTP"],
  [53, "DNS"],
  [110, "POP3"],
  [135, "Microsoft RPC"],
  [139, "NetBIOS"],
  [143, "IMAP"],
  [445, "SMB"],
  [1433, "Microsoft SQL Server"],
  [1521, "Oracle"],
  [2375, "Docker API"],
  [2379, "etcd"],
  [3306, "MySQL"],
  [3389, "RDP"],
  [5432, "PostgreSQL"],
  [5672, "AMQP"],
  [6379, "Redis"],
  [9200, "Elasticsearch"],
  [11211, "Memcached"],
  [27017, "MongoDB"],
]);

/** Suffixes of names that only resolve inside a network; `metadata.google.internal` falls under `.internal`. */
const INTERNAL_NAME_SUFFIXES = [".local", ".internal", ".localhost", ".home.arpa"] as const;

/** The exact host spellings a sandbox endpoint may use over http or https on any port. */
const SANDBOX_LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface WebhookUrlOptions {
  livemode: boolean;
  /**
   * Ports refused on the sandbox loopback hosts on top of the sensitive ports: the service's own listeners and
   * its database's, so that a sandbox endpoint cannot aim deliveries at the host's own services.
   */
  refusedLoopbackPorts?: ReadonlySet<number>;
}

function refuse(reason: string): never {
  throw svcError("invalid_webhook_url", reason, { param: "url" });
}

/**
 * Checks a webhook URL against the static rules and returns its normalised form.
 * Throws `invalid_webhook_url` (param `url`) with a precise reason for every refusal.
 */
export function checkWebhookUrl(raw: string, options: WebhookUrlOptions): CheckedWebhookUrl {
  if (typeof raw !== "string" || raw.length === 0) refuse("The URL must be a non-empty string.");
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    refuse(`The URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters long.`);
  }
  // The WHATWG parser silently trims or deletes these, so what was stored would differ from what was sent.
  if (/[\u0000-\u0020\u007f]/.test(raw)) refuse("The URL must not contain spaces or control characters.");
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    refuse("The URL is not a valid absolute URL.");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") refuse("The URL scheme must be https.");
  if (parsed.username !== "" || parsed.password !== "") {
    refuse("The URL must not contain credentials (a user name or password).");
  }

  const sandboxLoopback = !options.livemode && isSandboxLoopbackSpelling(raw, parsed);
  if (parsed.protocol === "http:" && !sandboxLoopback) {
    refuse(
      options.livemode
        ? "The URL scheme must be https for live endpoints."
        : "The URL scheme must be https; http is accepted only for sandbox endpoints on localhost, 127.0.0.1 or [::1].",
    );
  }

  const bracketed = parsed.hostname.startsWith("[");
  const hostname = bracketed ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const literalAddress = bracketed || isIPv4(hostname) ? hostname : null;
  const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port);

  if (!sandboxLoopback) {
    if (literalAddress !== null) {
      const reason = describeRefusedAddress(literalAddress);
      if (reason !== null) refuse(`The URL host ${parsed.hostname} is ${reason}.`);
    } else {
      checkHostName(hostname, options.livemode);
    }
  }
  // The loopback exemption is for the host only: on loopback too, the ports of local services stay refused.
  if (port === 0) refuse("The URL port 0 is not a valid destination port.");
  const service = SENSITIVE_PORTS.get(port);
  if (service !== undefined) refuse(`The URL port ${port} is refused: it is the port of ${service}.`);
  if (sandboxLoopback && options.refusedLoopbackPorts?.has(port)) {
    refuse(`The URL port ${port} is refused on a loopback host: it is a port of this service or of its database.`);
  }

  const url = normalisedHref(parsed, literalAddress === null && hostname.endsWith("."));
  if (url.length > MAX_WEBHOOK_URL_LENGTH) {
    refuse(`The normalised URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters long.`);
  }
  return { url, hostname: literalAddress === null ? hostname.replace(/\.$/, "") : hostname, port, literalAddress };
}

const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/** Percent-encoded unreserved characters decoded, the hex digits of every other escape uppercased. */
function normalisePercentEncoding(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) => {
    const character = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(character) ? character : `%${hex.toUpperCase()}`;
  });
}

/** The WHATWG serialisation of an accepted URL, further normalised (see `CheckedWebhookUrl.url`). */
function normalisedHref(parsed: URL, trailingDot: boolean): string {
  const url = new URL(parsed.href);
  url.hash = "";
  if (trailingDot) url.hostname = url.hostname.slice(0, -1);
  url.pathname = normalisePercentEncoding(url.pathname);
  // An empty query ("?" alone) is dropped by assigning it.
  url.search = normalisePercentEncoding(url.search);
  return url.href;
}

/**
 * The sandbox exemption applies to the host as written, not to whatever the parser canonicalises to, so that
 * spellings like `2130706433` or `0x7f.1` stay refused everywhere.
 */
function isSandboxLoopbackSpelling(raw: string, parsed: URL): boolean {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/\\?#]*)/i.exec(raw)?.[1];
  if (authority === undefined || authority.includes("@")) return false;
  const host = authority.startsWith("[") ? authority.slice(0, authority.indexOf("]") + 1) : authority.replace(/:[^:]*$/, "");
  return SANDBOX_LOOPBACK_HOSTS.has(host.toLowerCase()) && SANDBOX_LOOPBACK_HOSTS.has(parsed.hostname);
}

function checkHostName(hostname: string, livemode: boolean): void {
  // One trailing dot marks a fully qualified name; the rules apply to the name without it.
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  if (name === "localhost") {
    refuse(
      livemode
        ? "The URL host localhost is a loopback name, refused for live endpoints."
        : `The URL host ${hostname} is a loopback name; sandbox endpoints may use exactly localhost, 127.0.0.1 or [::1].`,
    );
  }
  const labels = name.split(".");
  if (labels.some((label) => label === "")) refuse(`The URL host ${hostname} has an empty label.`);
  if (labels.length === 1) {
    refuse(`The URL host ${hostname} is a single-label internal name; use a fully qualified public domain name.`);
  }
  const suffix = INTERNAL_NAME_SUFFIXES.find((s) => name.endsWith(s));
  if (suffix !== undefined) refuse(`The URL host ${hostname} is an internal name (${suffix}).`);
}

/** Whether a resolved or literal address (IPv4 in any inet_aton spelling, or IPv6) must never be connected to. */
export function isRefusedAddress(ip: string): boolean {
  return describeRefusedAddress(ip) !== null;
}

/**
 * Why an address is refused, as a phrase completing "The host is ...", or null when it is a public unicast
 * address. Anything that is not an IP address is refused, so a surprising resolver answer fails closed.
 */
export function describeRefusedAddress(ip: string): string | null {
  if (typeof ip !== "string") return "not an IP address";
  const v4 = parseIPv4(ip);
  if (v4 !== null) return describeRefusedIPv4(v4);
  const v6 = parseIPv6(ip);
  if (v6 !== null) return describeRefusedIPv6(v6);
  return "not an IP address";
}

interface Range<T> {
  readonly base: T;
  readonly prefix: number;
  readonly label: string;
}

function v4Range(cidr: string, label: string): Range<number> {
  const [address, prefix] = cidr.split("/");
  return { base: parseIPv4(address!)!, prefix: Number(prefix), label };
}

// The IANA IPv4 special-purpose registry (RFC 6890 and successors), plus multicast and the reserved class E.
// Globally reachable anycast entries (AS112, AMT, 6to4 relay) are refused too: no webhook receiver lives there.
const REFUSED_IPV4: readonly Range<number>[] = [
  v4Range("0.0.0.0/8", "an unspecified address (0.0.0.0/8, this network)"),
  v4Range("10.0.0.0/8", "a private address (10.0.0.0/8)"),
  v4Range("100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)"),
  v4Range("127.0.0.0/8", "a loopback address (127.0.0.0/8)"),
  v4Range("169.254.0.0/16", "a link-local address (169.254.0.0/16, includes cloud metadata services)"),
  v4Range("172.16.0.0/12", "a private address (172.16.0.0/12)"),
  v4Range("192.0.0.0/24", "a reserved IETF protocol address (192.0.0.0/24)"),
  v4Range("192.0.2.0/24", "a documentation address (192.0.2.0/24)"),
  v4Range("192.31.196.0/24", "a reserved AS112 anycast address (192.31.196.0/24)"),
  v4Range("192.52.193.0/24", "a reserved AMT anycast address (192.52.193.0/24)"),
  v4Range("192.88.99.0/24", "a reserved 6to4 relay anycast address (192.88.99.0/24)"),
  v4Range("192.168.0.0/16", "a private address (192.168.0.0/16)"),
  v4Range("192.175.48.0/24", "a reserved AS112 anycast address (192.175.48.0/24)"),
  v4Range("198.18.0.0/15", "a benchmarking address (198.18.0.0/15)"),
  v4Range("198.51.100.0/24", "a documentation address (198.51.100.0/24)"),
  v4Range("203.0.113.0/24", "a documentation address (203.0.113.0/24)"),
  v4Range("224.0.0.0/4", "a multicast address (224.0.0.0/4)"),
  v4Range("255.255.255.255/32", "the broadcast address"),
  v4Range("240.0.0.0/4", "a reserved address (240.0.0.0/4)"),
];

function inV4Range(address: number, range: Range<number>): boolean {
  if (range.prefix === 0) return true;
  const shift = 32 - range.prefix;
  return address >>> shift === range.base >>> shift;
}

function describeRefusedIPv4(address: number): string | null {
  return REFUSED_IPV4.find((range) => inV4Range(address, range))?.label ?? null;
}

function v6Range(cidr: string, label: string): Range<bigint> {
  const [address, prefix] = cidr.split("/");
  return { base: parseIPv6(address!)!, prefix: Number(prefix), label };
}

const GLOBAL_UNICAST_V6 = v6Range("2000::/3", "");
const IPV4_MAPPED = v6Range("::ffff:0:0/96", "");
const NAT64_WELL_KNOWN = v6Range("64:ff9b::/96", "");
const SIX_TO_FOUR = v6Range("2002::/16", "");
const TEREDO = v6Range("2001::/32", "");

// Outside 2000::/3 everything is special or unassigned; these labels name the ranges callers meet in practice.
const REFUSED_IPV6_OUTSIDE_GLOBAL: readonly Range<bigint>[] = [
  v6Range("::/128", "the unspecified IPv6 address (::)"),
  v6Range("::1/128", "the IPv6 loopback address (::1)"),
  v6Range("::/96", "an IPv4-compatible IPv6 address (::/96, deprecated)"),
  v6Range("64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)"),
  v6Range("100::/64", "a discard-only IPv6 address (100::/64)"),
  v6Range("fc00::/7", "a unique local IPv6 address (fc00::/7)"),
  v6Range("fe80::/10", "a link-local IPv6 address (fe80::/10)"),
  v6Range("fec0::/10", "a site-local IPv6 address (fec0::/10, deprecated)"),
  v6Range("ff00::/8", "a multicast IPv6 address (ff00::/8)"),
];

// Special-purpose ranges inside 2000::/3 (IANA IPv6 special-purpose registry); Teredo and 6to4 are
// judged by the IPv4 addresses they embed, before this list is consulted.
const REFUSED_IPV6_INSIDE_GLOBAL: readonly Range<bigint>[] = [
  v6Range("2001:db8::/32", "a documentation IPv6 address (2001:db8::/32)"),
  v6Range("2001:2::/48", "a benchmarking IPv6 address (2001:2::/48)"),
  v6Range("2001::/23", "a reserved IETF protocol IPv6 address (2001::/23)"),
  v6Range("2620:4f:8000::/48", "a reserved AS112 IPv6 address (2620:4f:8000::/48)"),
  v6Range("3fff::/20", "a documentation IPv6 address (3fff::/20)"),
];

function inV6Range(address: bigint, range: Range<bigint>): boolean {
  const shift = BigInt(128 - range.prefix);
  return address >> shift === range.base >> shift;
}

function embeddedRefusal(form: string, v4: number): string | null {
  const reason = describeRefusedIPv4(v4);
  return reason === null ? null : `${form} of ${formatIPv4(v4)}, ${reason}`;
}

function describeRefusedIPv6(address: bigint): string | null {
  const low32 = Number(address & 0xffffffffn);
  if (inV6Range(address, IPV4_MAPPED)) return embeddedRefusal("an IPv4-mapped IPv6 address", low32);
  if (inV6Range(address, NAT64_WELL_KNOWN)) return embeddedRefusal("a NAT64 IPv6 address", low32);
  if (inV6Range(address, SIX_TO_FOUR)) {
    return embeddedRefusal("a 6to4 IPv6 address", Number((address >> 80n) & 0xffffffffn));
  }
  if (inV6Range(address, TEREDO)) {
    // Teredo carries the server address in bits 32-63 and the client address inverted in the last 32 bits.
    return embeddedRefusal("a Teredo IPv6 address", Number((address >> 64n) & 0xffffffffn)) ?? embeddedRefusal("a Teredo IPv6 address", ~low32 >>> 0);
  }
  if (!inV6Range(address, GLOBAL_UNICAST_V6)) {
    return (
      REFUSED_IPV6_OUTSIDE_GLOBAL.find((range) => inV6Range(address, range))?.label ?? "a reserved IPv6 address (outside global unicast 2000::/3)"
    );
  }
  return REFUSED_IPV6_INSIDE_GLOBAL.find((range) => inV6Range(address, range))?.label ?? null;
}

/**
 * Parses IPv4 the way inet_aton and the WHATWG URL parser do: one to four parts, each decimal, octal
 * (leading 0) or hexadecimal (0x), the last part filling the remaining bytes, one trailing dot allowed.
 */
function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part);
    else return null;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((value) => value > 255)) return null;
  if (last >= 256 ** (4 - values.length)) return null;
  return values.reduce((sum, value, index) => sum + value * 256 ** (3 - index), 0) + last;
}

function formatIPv4(address: number): string {
  return [24, 16, 8, 0].map((shift) => (address >>> shift) & 0xff).join(".");
}

/** Parses an IPv6 address (zone index ignored, dotted IPv4 tail allowed) into a 128-bit integer. */
function parseIPv6(text: string): bigint | null {
  const zoneless = text.replace(/%.*$/, "");
  if (!isIPv6(zoneless)) return null;
  let groups = zoneless.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(groups);
  if (dotted) {
    const v4 = parseIPv4(dotted[1]!)!;
    groups = `${groups.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = groups.split("::") as [string, string | undefined];
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headGroups.length - tailGroups.length;
  const all = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill("0"), ...tailGroups];
  return all.reduce((sum, group) => (sum << 16n) | BigInt(parseInt(group, 16)), 0n);
}
