// `engines` in package.json is a promise to whoever installs Svc: every package of the lockfile must run on the
// oldest Node it names, or `npm ci` warns EBADENGINE and the promise is false.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import semver from "semver";

interface LockEntry {
  engines?: { node?: string } | string[];
  optional?: boolean;
  os?: string[];
  cpu?: string[];
}

describe("engines", () => {
  it("every locked package accepts the oldest Node that package.json's engines allows", () => {
    const ours = JSON.parse(readFileSync("package.json", "utf8")).engines.node as string;
    const oldest = semver.minVersion(ours)!.version;
    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, LockEntry> };
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && !Array.isArray(entry.engines) && entry.engines?.node !== undefined)
      .filter(([, entry]) => !semver.satisfies(oldest, (entry.engines as { node: string }).node, { includePrerelease: true }))
      .map(([path, entry]) => `${path.replace(/^.*node_modules\//, "")} (node ${(entry.engines as { node: string }).node})`);
    expect(refusing, `packages refusing Node ${oldest}`).to.deep.equal([]);
    expect(semver.satisfies(process.version, ours), `this Node (${process.version}) against ${ours}`).to.equal(true);
  });
});
