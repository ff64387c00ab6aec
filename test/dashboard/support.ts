// HTTP helpers for the dashboard tests: a cookie jar, the sign-in form's token, CSRF fields read from pages, and a
// suite's service with a console signed in to it.
import { expect } from "chai";
import { startTestService, type TestService } from "../support/test-service.ts";

export interface DashboardResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly service: TestService,
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  async request(
    method: "GET" | "POST",
    path: string,
    form?: Record<string, string> | URLSearchParams,
    headers: Record<string, string> = {},
  ): Promise<DashboardResponse> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(this.service.baseUrl + path, {
      method,
      redirect: "manual",
      headers: {
        ...this.extraHeaders,
        ...(cookie ? { cookie } : {}),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        ...headers,
      },
      ...(form ? { body: new URLSearchParams(form as Record<string, string>).toString() } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get("location") };
  }

  get(path: string): Promise<DashboardResponse> {
    return this.request("GET", path);
  }

  /** Posts a form with the CSRF token of the page at `from`. */
  async post(from: string, path: string, form: Record<string, string> = {}): Promise<DashboardResponse> {
    const page = await this.get(from);
    return this.request("POST", path, { _csrf: csrfOf(page.text), ...form });
  }

  /** Posts the form at `action` as the page at `from` renders it (its CSRF token and Idempotency-Key), with `fields`. */
  async submit(from: string, action: string, fields: Record<string, string> = {}): Promise<DashboardResponse> {
    const page = await this.get(from);
    return this.request("POST", action, { ...formFields(page.text, action), ...fields });
  }

  async signIn(credential: string): Promise<DashboardResponse> {
    const page = await this.get("/dashboard/sign-in");
    return this.request("POST", "/dashboard/sign-in", { _csrf: csrfOf(page.text), credential });
  }
}

/** The fields of the page's form posting to `action`: its hidden fields (CSRF token, Idempotency-Key) and inputs' values. */
export function formFields(markup: string, action: string): Record<string, string> {
  const start = markup.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posts to ${action}`);
  const form = markup.slice(start, markup.indexOf("</form>", start));
  const fields: Record<string, string> = {};
  for (const [tag] of form.matchAll(/<input [^>]*>/g)) {
    const name = / name="([^"]+)"/.exec(tag)?.[1];
    if (name) fields[name] = (/ value="([^"]*)"/.exec(tag)?.[1] ?? "").replaceAll("&amp;", "&");
  }
  return fields;
}

export function csrfOf(markup: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(markup);
  if (!match) throw new Error("no CSRF field in the page");
  return match[1]!;
}

/**
 * A suite's service and a console client signed in with its sandbox key: started before the suite's tests, stopped
 * after them. `use` hands both to the suite's own variables once they exist.
 */
export function signedInConsole(use: (service: TestService, client: DashboardClient) => void): void {
  let service: TestService | undefined;
  before(async () => {
    service = await startTestService();
    const client = new DashboardClient(service);
    expect((await client.signIn(service.sandboxKey)).status).to.equal(303);
    use(service, client);
  });
  after(async () => {
    await service?.stop();
  });
}
