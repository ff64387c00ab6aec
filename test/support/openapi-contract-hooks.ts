// Mocha root hook plugin (.mocharc.cjs `require`): each REST response the suite recorded must match the OpenAPI
// document the service serves. A mismatch fails the run as the failing "after all" hook, listing path, status and
// schema error. A serial run checks once, after the whole run; a parallel run (`npm test`) after each file, in each
// worker, the responses recorded since the last check.
import { isPublicApiPath, OpenApiContract } from "./openapi-contract.ts";
import { recordedResponses } from "./response-log.ts";
import { startTestService } from "./test-service.ts";

async function servedOpenApiDocument(): Promise<Record<string, unknown>> {
  const svc = await startTestService();
  try {
    const response = await svc.request("GET", "/v1/openapi.json", { key: null });
    if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}: ${response.text}`);
    return response.body;
  } finally {
    await svc.stop();
  }
}

// The document does not change within a process: one service start (and one schema compilation) per process.
let served: OpenApiContract | null = null;
let responsesChecked = 0;

export const mochaHooks = {
  // Named, because mocha titles the hook (and so the failure it reports) after the function.
  afterAll: [
    async function everyRecordedRestResponseMatchesTheOpenApiDocument(this: Mocha.Context) {
      this.timeout(60_000);
      if (!recordedResponses.slice(responsesChecked).some((r) => isPublicApiPath(r.path))) return;
      served ??= new OpenApiContract(await servedOpenApiDocument());
      const responses = recordedResponses.slice(responsesChecked);
      responsesChecked = recordedResponses.length;
      const checked = responses.filter((r) => isPublicApiPath(r.path)).length;
      const breaches = served.breachesOfAll(responses);
      if (breaches.length > 0) {
        throw new Error(
          `OpenAPI contract: ${breaches.length} kind(s) of REST response among ${checked} do not match GET /v1/openapi.json:\n  ` +
            breaches.join("\n  "),
        );
      }
    },
  ],
};
