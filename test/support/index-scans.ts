// What explain says a query read: the index scans of its winning plan, as mongod and the embedded server give it.

/** Every IXSCAN stage of a plan (mongod nests them under FETCH, OR, SORT_MERGE, LIMIT...), by index name. */
export function indexScans(node: unknown, out: string[] = []): string[] {
  if (!node || typeof node !== "object") return out;
  if ((node as { stage?: string }).stage === "IXSCAN") out.push(String((node as { indexName?: unknown }).indexName));
  for (const value of Object.values(node)) indexScans(value, out);
  return out;
}
