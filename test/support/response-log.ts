// Every REST response the suite sees, so the contract test can check each against the OpenAPI document.
export interface RecordedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  /** Lowercase names, as the Fetch API gives them. */
  headers: Record<string, string>;
  body: unknown;
}

export const recordedResponses: RecordedResponse[] = [];

export function recordResponse(method: string, path: string, response: { status: number; headers: Headers; body: unknown }): void {
  recordedResponses.push({
    method: method.toUpperCase(),
    path,
    status: response.status,
    contentType: response.headers.get("content-type"),
    headers: Object.fromEntries(response.headers),
    body: response.body,
  });
}
