// docs/contract.md's Surface table names every route of the OpenAPI document with its success status, and no
// route the document lacks: the prose contract cannot drift from the routes the service serves.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { PUBLIC_API } from "../../src/api/public-api.ts";
import { buildOpenApiDocument } from "../../src/rest/openapi/document.ts";

const CONTRACT = new URL("../../docs/contract.md", import.meta.url);
const METHODS = ["get", "post", "patch", "delete"];

describe("docs/contract.md's Surface table", () => {
  it("lists every route of the OpenAPI document with its success status, and nothing else", () => {
    const markdown = readFileSync(CONTRACT, "utf8");
    const surface = markdown.slice(markdown.indexOf("## Surface"), markdown.indexOf("\n## ", markdown.indexOf("## Surface") + 1));
    const documented = new Map<string, string>();
    for (const [, method, path, answer] of surface.matchAll(/^\| (GET|POST|PATCH|DELETE) \| `([^`]+)` \| (\d{3})?/gm)) {
      documented.set(`${method} ${path}`, answer ?? "");
    }
    const served = new Map<string, string>();
    const document = buildOpenApiDocument(PUBLIC_API) as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!METHODS.includes(method)) continue;
        served.set(`${method.toUpperCase()} ${path}`, Object.keys(operation.responses).find((status) => status.startsWith("2"))!);
      }
    }
    expect([...documented.keys()].sort()).to.deep.equal([...served.keys()].sort());
    for (const [route, status] of served) expect(documented.get(route), route).to.equal(status);
  });
});
