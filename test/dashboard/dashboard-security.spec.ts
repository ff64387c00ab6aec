// The dashboard's security over plain HTTP: cookie flags, CSRF refusal, CSP and the other headers, idle expiry,
// escaping, sign-in rate limiting, the key never in a page or URL, sessions ended by revocation.
import { expect } from "chai";
import { IDLE_LIFETIME_MS } from "../../src/dashboard/dashboard-routes.ts";
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from "../support/test-service.ts";
import { csrfOf, DashboardClient } from "./support.ts";

describe("dashboard security", () => {
  let service: TestService;
  let now = Date.now();

  before(async () => {
    service = await startTestService({ clock: () => new Date(now), env: { SVC_DASHBOARD_SIGN_IN_LIMIT: "8" } });
  });
  after(async () => {
    await service.stop();
  });

  it("sends a signed-out visitor to the sign-in page, which carries CSP and the other headers", async () => {
    const client = new DashboardClient(service);
    const home = await client.get("/dashboard");
    expect(home.status).to.equal(303);
    expect(home.location).to.equal("/dashboard/sign-in");
    const signIn = await client.get("/dashboard/sign-in");
    expect(signIn.status).to.equal(200);
    expect(signIn.headers.get("content-security-policy")).to.match(/^default-src 'self';/);
    expect(signIn.headers.get("content-security-policy")).to.include("frame-ancestors 'none'");
    expect(signIn.headers.get("x-frame-options")).to.equal("DENY");
    expect(signIn.headers.get("x-content-type-options")).to.equal("nosniff");
    expect(signIn.headers.get("cache-control")).to.equal("no-store");
    // No inline script or style, and nothing from another origin.
    expect(signIn.text).not.to.match(/<script(?![^>]*\bsrc="\/dashboard\/assets\/)/);
    expect(signIn.text).not.to.match(/<style|\sstyle=|\son[a-z]+=/i);
    expect(signIn.text).not.to.match(/(src|href)="(https?:)?\/\//);
  });

  it("signs in with a key: an HttpOnly SameSite=Strict session cookie, Secure only over TLS, the key nowhere in the answer", async () => {
    const client = new DashboardClient(service);
    const page = await client.get("/dashboard/sign-in");
    const answer = await client.request("POST", "/dashboard/sign-in", { _csrf: csrfOf(page.text), credential: service.sandboxKey });
    expect(answer.status).to.equal(303);
    expect(answer.location).to.equal("/dashboard");
    const setCookie = answer.headers.getSetCookie().find((c) => c.startsWith("svc_dashboard="))!;
    expect(setCookie).to.include("HttpOnly").and.include("SameSite=Strict").and.include("Path=/dashboard");
    expect(setCookie).not.to.include("Secure");
    expect(setCookie).not.to.include(service.sandboxKey);
    const home = await client.get("/dashboard");
    expect(home.status).to.equal(200);
    expect(home.text).to.include("Overview");
    expect(home.text).not.to.include(service.sandboxKey);

    const tls = new DashboardClient(service, { "x-forwarded-proto": "https" });
    const tlsAnswer = await tls.signIn(service.sandboxKey);
    expect(tlsAnswer.headers.getSetCookie().find((c) => c.startsWith("svc_dashboard="))).to.include("Secure");
  });

  it("refuses a sign-in form without its token, and a bad credential", async () => {
    const client = new DashboardClient(service);
    const forged = await client.request("POST", "/dashboard/sign-in", { credential: service.sandboxKey });
    expect(forged.status).to.equal(403);
    expect(forged.headers.getSetCookie().some((c) => c.startsWith("svc_dashboard="))).to.equal(false);
    const bad = await client.signIn("svc_test_000000000000000000000000000000");
    expect(bad.status).to.equal(401);
    expect(bad.text).to.include("invalid_api_key");
  });

  it("refuses every change without the session's CSRF token (403), and makes none", async () => {
    const client = new DashboardClient(service);
    await client.signIn(service.sandboxKey);
    const without = await client.request("POST", "/dashboard/webhooks", { url: "https://example.com/csrf" });
    expect(without.status).to.equal(403);
    const wrong = await client.request("POST", "/dashboard/webhooks", { _csrf: "x".repeat(43), url: "https://example.com/csrf" });
    expect(wrong.status).to.equal(403);
    const list = await service.request("GET", "/v1/webhook-endpoints");
    expect(list.body.data.map((e: { url: string }) => e.url)).not.to.include("https://example.com/csrf");
    // Another content type than a form is refused before any handler.
    const json = await client.request("POST", "/dashboard/webhooks", undefined, { "content-type": "application/json" });
    expect(json.status).to.be.oneOf([403, 415]);
  });

  it("escapes user-provided strings: a description <script> renders as text", async () => {
    const client = new DashboardClient(service);
    await client.signIn(service.sandboxKey);
    const created = await client.post("/dashboard/webhooks", "/dashboard/webhooks", {
      url: "https://example.com/escape",
      description: `<script>alert("x")</script><img src=x onerror=alert(1)>`,
    });
    expect(created.status).to.equal(200);
    expect(created.text).to.include("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(created.text).not.to.include("<script>alert");
    expect(created.text).not.to.include("<img src=x");
  });

  it("ends a session after 12 hours idle, and keeps it while used", async () => {
    const client = new DashboardClient(service);
    await client.signIn(service.sandboxKey);
    now += IDLE_LIFETIME_MS - 60_000;
    expect((await client.get("/dashboard")).status).to.equal(200);
    now += IDLE_LIFETIME_MS - 60_000;
    expect((await client.get("/dashboard")).status).to.equal(200);
    now += IDLE_LIFETIME_MS + 1000;
    const expired = await client.get("/dashboard");
    expect(expired.status).to.equal(303);
    expect(expired.location).to.equal("/dashboard/sign-in");
  });

  it("ends the sessions of a revoked key", async () => {
    const created = await service.admin.createApiKey({ projectId: service.projectId, livemode: false });
    const client = new DashboardClient(service);
    await client.signIn(created.secret);
    expect((await client.get("/dashboard")).status).to.equal(200);
    await service.admin.revokeApiKey({ id: created.apiKey!.id });
    const after = await client.get("/dashboard");
    expect(after.status).to.equal(401);
    expect(after.text).to.include("api_key_revoked");
  });

  it("keeps the two consoles apart: an operator session has no project pages, a project session no operator pages", async () => {
    const operator = new DashboardClient(service);
    const signedIn = await operator.signIn(TEST_ADMIN_TOKEN);
    expect(signedIn.location).to.equal("/dashboard/operator");
    expect((await operator.get("/dashboard/operator")).text).to.include("Organizations");
    expect((await operator.get("/dashboard/webhooks")).location).to.equal("/dashboard/operator");
    const project = new DashboardClient(service);
    await project.signIn(service.sandboxKey);
    expect((await project.get("/dashboard/operator")).location).to.equal("/dashboard");
  });

  it("limits sign-in attempts per address (429 with Retry-After)", async () => {
    const client = new DashboardClient(service);
    let last = await client.signIn("wrong-token-0123456789");
    for (let i = 0; i < 12 && last.status !== 429; i++) last = await client.signIn("wrong-token-0123456789");
    expect(last.status).to.equal(429);
    expect(Number(last.headers.get("retry-after"))).to.be.greaterThan(0);
  });
});
