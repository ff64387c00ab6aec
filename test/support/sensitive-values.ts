// The secrets and personal data the test run sends or receives: none of them may appear in a log line.
const values = new Set<string>();

// JSON names and the camelCase names of the same fields in proto messages.
const PERSONAL_FIELDS = new Set(["phone", "email", "first_name", "last_name", "birth_date", "firstName", "lastName", "birthDate"]);
const SECRET_FIELDS = new Set(["secret"]);

export function rememberSensitive(value: string | null | undefined): void {
  // Very short values (a one-letter name) would match everywhere and prove nothing.
  if (typeof value === "string" && value.length >= 6) values.add(value);
}

/** Walks a request or response body, remembering the values of personal and secret fields. */
export function rememberSensitiveFields(body: unknown, depth = 0): void {
  if (depth > 5 || body === null || typeof body !== "object") return;
  for (const [key, value] of Object.entries(body)) {
    if ((PERSONAL_FIELDS.has(key) || SECRET_FIELDS.has(key)) && typeof value === "string") rememberSensitive(value);
    else rememberSensitiveFields(value, depth + 1);
  }
}

export function sensitiveValues(): string[] {
  return [...values];
}
