// The console's live events: the page (in the navigation) shows the latest events and names its stream; the
// stream is server-sent events fed by StreamEvents in process (the session's project and environment only), sends
// `ready` once subscribed and each new event as it is logged, and resumes after a browser's Last-Event-ID.
import { expect } from "chai";
import { uniquePhone } from "../support/phones.ts";
import { createOtherProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { clickAndWait, launchChromium } from "./browser.ts";
import { DashboardClient } from "./support.ts";

/** An open text/event-stream response read event by event. */
class EventSourceReader {
  readonly events: { id?: string; event: string; data: string }[] = [];
  readonly status: Promise<number>;
  private readonly abort = new AbortController();
  private buffer = "";

  constructor(url: string, cookie: string, lastEventId?: string) {
    this.status = (async () => {
      const response = await fetch(url, {
        headers: { cookie, accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
        signal: this.abort.signal,
      });
      if (response.ok) void this.read(response.body!);
      return response.status;
    })();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.buffer += decoder.decode(chunk, { stream: true });
        let end = this.buffer.indexOf("\n\n");
        while (end !== -1) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const fields = block.split("\n").filter((line) => !line.startsWith(":"));
          if (fields.length > 0) {
            const value = (name: string) => fields.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
            const id = value("id");
            this.events.push({ ...(id !== undefined ? { id } : {}), event: value("event") ?? "message", data: value("data") ?? "" });
          }
          end = this.buffer.indexOf("\n\n");
        }
      }
    } catch {
      // closed by the test
    }
  }

  async waitFor(predicate: (events: EventSourceReader["events"]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.events)) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${JSON.stringify(this.events)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.abort.abort();
  }
}

describe("dashboard: live events", function () {
  this.timeout(60_000);
  let svc: TestService;
  let console: DashboardClient;
  const cookie = () => [...console.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  const createUser = async (key = svc.sandboxKey) => {
    const made = await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } });
    expect(made.status, made.text).to.equal(201);
    const events = await svc.request("GET", "/v1/events?type=user.created&limit=100", { key });
    return (events.body.data as { id: string; data: { object: { id: string } } }[]).find((e) => e.data.object.id === made.body.id)!.id;
  };

  before(async () => {
    svc = await startTestService();
    console = new DashboardClient(svc);
    await console.signIn(svc.sandboxKey);
  });
  after(async () => {
    await svc?.stop();
  });

  it("is in the navigation, shows the latest events and streams the next from the newest shown", async () => {
    const shown = await createUser();
    const overview = await console.get("/dashboard");
    expect(overview.text).to.include('href="/dashboard/live-events"');
    const live = await console.get("/dashboard/live-events");
    expect(live.status).to.equal(200);
    expect(live.text).to.include(`href="/dashboard/events/${shown}"`);
    const source = /data-live-events="([^"]+)"/.exec(live.text)![1]!.replace(/&amp;/g, "&");
    expect(source).to.equal(`/dashboard/live-events/stream?after=${shown}`);

    // An event logged after the page was rendered, before its stream opened, still arrives.
    const between = await createUser();
    const stream = new EventSourceReader(svc.baseUrl + source, cookie());
    expect(await stream.status).to.equal(200);
    await stream.waitFor((events) => events.some((e) => e.event === "ready"));
    const next = await createUser();
    await stream.waitFor((events) => events.filter((e) => e.event === "event").length >= 2);
    stream.close();
    const received = stream.events.filter((e) => e.event === "event");
    expect(received.map((e) => e.id)).to.deep.equal([between, next]);
    expect(JSON.parse(received[1]!.data)).to.include({ id: next, type: "user.created" });
    expect(stream.events.map((e) => e.event)).to.deep.equal(["event", "ready", "event"]);
  });

  it("resumes after the browser's Last-Event-ID and shows only the session's project and environment", async () => {
    const last = await createUser();
    const missed = [await createUser(), await createUser()];
    const other = await createOtherProject(svc);
    await createUser(other.sandboxKey);
    await createUser(svc.liveKey);
    const stream = new EventSourceReader(`${svc.baseUrl}/dashboard/live-events/stream`, cookie(), last);
    expect(await stream.status).to.equal(200);
    await stream.waitFor((events) => events.some((e) => e.event === "ready"));
    await createUser(other.sandboxKey);
    const live = await createUser();
    await stream.waitFor((events) => events.some((e) => e.id === live));
    await new Promise((r) => setTimeout(r, 200));
    stream.close();
    expect(stream.events.filter((e) => e.event === "event").map((e) => e.id)).to.deep.equal([...missed, live]);
  });

  it("refuses a stream without a session, and an unknown Last-Event-ID with its status", async () => {
    const signedOut = await fetch(`${svc.baseUrl}/dashboard/live-events/stream`, { redirect: "manual" });
    expect(signedOut.status).to.equal(303);
    const unknown = new EventSourceReader(`${svc.baseUrl}/dashboard/live-events/stream`, cookie(), "evt_00000000-0000-4000-8000-000000000000");
    expect(await unknown.status).to.equal(400);
    unknown.close();
  });

  it("in a browser, puts each new event at the top of the table as it is logged (no reload, no polling)", async function () {
    const chromium = await launchChromium();
    if (!chromium) this.skip(); // no chromium here; .ci/run installs it
    try {
      const page = chromium.page;
      const requests: string[] = [];
      page.on("request", (request) => requests.push(new URL(request.url()).pathname));
      await page.goto(`${svc.baseUrl}/dashboard/sign-in`);
      await page.fill("#credential", svc.sandboxKey);
      await clickAndWait(page, "button[type=submit]");
      await page.goto(`${svc.baseUrl}/dashboard/live-events`);
      await page.waitForSelector('#live-status:text-matches("^Live")');
      const created = await createUser();
      await page.waitForSelector(`tbody tr:first-child a[href="/dashboard/events/${created}"]`, { timeout: 10_000 });
      expect(await page.textContent("tbody tr:first-child")).to.include("user.created");
      // One page load and one stream: the row came down the stream.
      expect(requests.filter((path) => path.startsWith("/dashboard/live-events"))).to.deep.equal([
        "/dashboard/live-events",
        "/dashboard/live-events/stream",
      ]);
    } finally {
      await chromium.close();
    }
  });
});
