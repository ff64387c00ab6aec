// Headless Chromium for the dashboard's browser tests (Debian's chromium package, driven by playwright-core, a fresh
// profile directory each), axe-core run in a page, and the documentation's screenshots (written only with
// SVC_WRITE_SCREENSHOTS=1, so a normal run leaves the tree clean).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = fileURLToPath(new URL("../../docs/screenshots/", import.meta.url));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface Chromium {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Chromium with a fresh profile; null when it is not installed here (.ci/run installs it, so CI always runs). */
export async function launchChromium(options: { javaScriptEnabled?: boolean } = {}): Promise<Chromium | null> {
  if (!existsSync(CHROMIUM)) return null;
  const { chromium } = await import("playwright-core");
  const profileDir = mkdtempSync(path.join(tmpdir(), "svc-dashboard-chromium-"));
  // playwright passes the profile directory as --user-data-dir.
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
    viewport: { width: 1280, height: 900 },
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("dialog", (dialog) => void dialog.accept());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

/** axe-core's serious and critical violations in the page, each as "rule: help (targets)". */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // Run in the page (a string: the test program has no DOM types).
  return (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((result) =>
    result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id + ": " + v.help + " (" + v.nodes.map((n) => n.target.join(" ")).join(", ") + ")"))`)) as string[];
}

/** Writes a screenshot of the page to docs/screenshots/`name`, only when SVC_WRITE_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.SVC_WRITE_SCREENSHOTS !== "1") return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, name), fullPage: options.fullPage ?? false });
}

/** Clicks and waits for the navigation it starts. */
export async function clickAndWait(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

/** Signs in on the sign-in page with a secret API key or the admin token. */
export async function signInWith(page: Page, baseUrl: string, credential: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/sign-in`);
  await page.fill("#credential", credential);
  await clickAndWait(page, "button[type=submit]");
}

/** Reloads the page until `selector` shows (work the service finishes in the background). */
export async function reloadUntil(page: Page, selector: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await page.locator(selector).count()) === 0) {
    if (Date.now() > deadline) throw new Error(`${selector} did not appear on ${page.url()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await page.reload();
  }
}
