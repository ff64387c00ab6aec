// The development credentials of the embedded default (no MONGODB_URI): the admin token and the Default project's
// key secrets this process generated or adopted, kept beside the data in SVC_DATA_DIR (a file only its owner may
// read), so every `npm start` on that directory prints the same working export line. A database of its own is a
// developer's machine; with MONGODB_URI nothing is written and secrets are shown once, as in production.
import { chmodSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface DevCredentials {
  admin_token?: string;
  sandbox_key?: string;
  live_key?: string;
}

const FILE_NAME = "credentials.json";

export function devCredentialsPath(dataDir: string): string {
  return path.join(dataDir, FILE_NAME);
}

/** What an earlier start kept; nothing when there is no file. A file that cannot be read as JSON counts as none. */
export function readDevCredentials(dataDir: string): DevCredentials {
  let text: string;
  try {
    text = readFileSync(devCredentialsPath(dataDir), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const kept: DevCredentials = {};
    for (const field of ["admin_token", "sandbox_key", "live_key"] as const) {
      if (typeof parsed[field] === "string") kept[field] = parsed[field];
    }
    return kept;
  } catch {
    return {};
  }
}

/** Replaces the file whole (written aside, then renamed), readable and writable by its owner only. */
export function writeDevCredentials(dataDir: string, credentials: DevCredentials): void {
  const target = devCredentialsPath(dataDir);
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, target);
}
