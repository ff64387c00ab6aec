// Personal data and secrets never reach the logs: structured fields are redacted by path (see logger.ts), and
// free text (error messages, for instance a duplicate-key message quoting a phone number) is scrubbed here.
const PATTERNS: [RegExp, string][] = [
  [/svc_(test|live)_[A-Za-z0-9]+/g, "svc_$1_[redacted]"],
  [/whsec_[A-Za-z0-9]+/g, "whsec_[redacted]"],
  [/adm_[A-Za-z0-9_-]+/g, "adm_[redacted]"],
  [/Bearer\s+\S+/gi, "Bearer [redacted]"],
  // E.164 phone numbers, also with the plus sign percent-encoded as in a URL.
  [/\+[1-9]\d{6,14}/g, "+[redacted]"],
  [/%2B[1-9]\d{6,14}/gi, "%2B[redacted]"],
  // Emails, bare or percent-encoded (%40). The delimiters of a URL (/ ? & = #) end an address, so a URL or a
  // path keeps its route and only the address goes.
  [/[^\s@"'<>(){}[\],;:/?&=#]+(?:@|%40)[^\s@"'<>(){}[\],;:/?&=#]+/gi, "[redacted-email]"],
  // Calendar dates as birth dates are written (timestamps keep their time part and stay readable).
  [/\b\d{4}-\d{2}-\d{2}\b(?!T)/g, "[redacted-date]"],
];

/**
 * What every pattern above needs somewhere in the text: most logged strings (methods, routes, addresses) hold
 * none of it, and one scan of this clears them instead of a scan per pattern.
 */
const MAY_HOLD_PERSONAL_DATA = /svc_|whsec_|adm_|bearer|\+[1-9]|%2b[1-9]|@|%40|\d{4}-\d{2}-\d{2}/i;

export function scrubText(text: string): string {
  if (!MAY_HOLD_PERSONAL_DATA.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
