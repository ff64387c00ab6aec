// The dashboard's stylesheet and script, served from /dashboard/assets/ (so CSP "default-src 'self'" allows them).
// Kept as strings in a module so the compiled build (dist/) carries them without a copy step.

export const DASHBOARD_CSS = String.raw`
/* The dashboard's only stylesheet: no third-party fonts or assets. Colours keep WCAG AA contrast. */
:root { --fg: #1a1f2b; --muted: #4b5563; --line: #d4d8e0; --bg: #f6f7f9; --card: #fff; --accent: #1d4ed8;
  --ok: #166534; --ok-bg: #dcfce7; --bad: #991b1b; --bad-bg: #fee2e2; --warn: #854d0e; --warn-bg: #fef3c7; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
header.top { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.5rem; background: #111827; color: #f9fafb; flex-wrap: wrap; }
header.top a { color: #f9fafb; text-decoration: none; }
header.top .brand a { font-weight: 700; font-size: 1.1rem; }
header.top .muted { color: #d1d5db; }
header.top nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
header.top nav a[aria-current="page"] { text-decoration: underline; text-underline-offset: 4px; }
header.top .sign-out { margin-left: auto; }
header.top button.link { background: none; border: 1px solid #9ca3af; color: #f9fafb; }
main { max-width: 1100px; margin: 1.5rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
section.card, .card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 1rem; }
.stat { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; }
.stat .value { font-size: 1.6rem; font-weight: 700; display: block; }
.muted { color: var(--muted); }
.table-wrap { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; background: var(--card); }
caption { text-align: left; font-weight: 600; padding: .4rem 0; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; background: #eef0f4; }
form.inline { display: inline; }
form.stack label, .field label { display: block; font-weight: 600; margin: .5rem 0 .2rem; }
input:not([type]), input[type="text"], input[type="password"], input[type="url"], input[type="number"], input[type="datetime-local"], select, textarea {
  font: inherit; padding: .35rem .5rem; border: 1px solid #6b7280; border-radius: 4px; min-width: 16rem; background: #fff; color: var(--fg); }
button { font: inherit; padding: .3rem .8rem; border-radius: 4px; border: 1px solid #1e3a8a; background: var(--accent); color: #fff; cursor: pointer; }
button.danger { background: #b91c1c; border-color: #7f1d1d; }
button.caution { background: #fff; color: var(--warn); border-color: #b45309; }
button.secondary { background: #fff; color: var(--accent); }
.row { display: flex; gap: .75rem; align-items: flex-end; flex-wrap: wrap; margin: .5rem 0; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; margin: .75rem 0; }
.flash { padding: .6rem 1rem; border-radius: 6px; margin-bottom: 1rem; border: 1px solid; }
.flash-success { color: var(--ok); background: var(--ok-bg); border-color: #86efac; }
.flash-error { color: var(--bad); background: var(--bad-bg); border-color: #fca5a5; }
.badge { display: inline-block; font-size: .75rem; font-weight: 700; padding: .1rem .5rem; border-radius: 999px; margin-left: .4rem; }
.badge-sandbox { background: #fde68a; color: #422006; }
.badge-live { background: #bbf7d0; color: #052e16; }
.badge-operator { background: #c7d2fe; color: #1e1b4b; }
.tag { display: inline-block; font-size: .8rem; padding: 0 .45rem; border-radius: 4px; background: #e5e7eb; color: #111827; }
.tag-succeeded, .tag-enabled, .tag-approved, .tag-ready, .tag-active { background: var(--ok-bg); color: var(--ok); }
.tag-failed, .tag-disabled, .tag-rejected, .tag-revoked, .tag-suspended { background: var(--bad-bg); color: var(--bad); }
.tag-pending { background: var(--warn-bg); color: var(--warn); }
pre.json { background: #0f172a; color: #e2e8f0; padding: 1rem; border-radius: 6px; overflow-x: auto; max-height: 32rem; }
.secret { background: var(--warn-bg); border: 1px solid #f59e0b; border-radius: 8px; padding: .75rem 1rem; margin-bottom: 1rem; }
.secret-value { font-size: 14px; word-break: break-all; }
.signin { max-width: 28rem; margin: 4rem auto; }
.empty { color: var(--muted); font-style: italic; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
dl.headers { font-size: 13px; margin-bottom: .5rem; }
dl.headers dd { word-break: break-all; }
h3 { font-size: 1rem; margin: .5rem 0; }
.exchange { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 1rem; }
.exchange-part { min-width: 0; }
pre.attempt-body { white-space: pre-wrap; word-break: break-all; max-height: 20rem; }
`;

export const DASHBOARD_JS = String.raw`
// The dashboard's only script (served from /dashboard/assets, so CSP "default-src 'self'" allows it). Every page
// works without it; it adds a copy button for shown-once secrets, a confirmation before destructive actions,
// one post per form while it is in flight, and filters that swap the list in without a full reload.
"use strict";
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute("data-copy") || "");
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent || "").then(
    () => { button.textContent = "Copied"; },
    () => { button.textContent = "Copy failed"; },
  );
});
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  const question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
    return;
  }
  // One post per form while it is in flight: a double click sends it once (the server replays a second post of
  // the same form anyway, by its Idempotency-Key). Disabled after this event, so the clicked button's value is sent.
  if (form.method.toLowerCase() !== "post") return;
  if (form.dataset.inFlight === "true") {
    event.preventDefault();
    return;
  }
  form.dataset.inFlight = "true";
  setTimeout(() => {
    for (const button of form.querySelectorAll("button, input[type=submit]")) {
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
    }
  }, 0);
});
// Filters without a full reload: a filter form (form[data-filter], method GET) or a link to the same page inside
// the list ([data-results]: status filters, "Older") fetches the page it names and swaps the list in; the address
// follows with history.pushState and Back fetches the list of the address it returns to. Without the script, the
// same form and links load the page. Anything unexpected (an error page, a sign-in redirect) loads it in full.
async function showResults(url, push) {
  const region = document.querySelector("[data-results]");
  if (!region) {
    window.location.assign(url);
    return;
  }
  region.setAttribute("aria-busy", "true");
  try {
    const response = await fetch(url, { headers: { accept: "text/html" }, credentials: "same-origin" });
    const fetched = new DOMParser().parseFromString(await response.text(), "text/html");
    const next = fetched.querySelector("[data-results]");
    if (!response.ok || response.redirected || !next) {
      window.location.assign(url);
      return;
    }
    if (push) history.pushState({ results: true }, "", url);
    // The form shows the filters of the list shown (after Back, those of the earlier address).
    for (const form of document.querySelectorAll("form[data-filter]")) {
      const same = fetched.querySelector("form[data-filter][action='" + form.getAttribute("action") + "']");
      if (!same) continue;
      for (const field of form.elements) {
        const twin = field.name ? same.elements.namedItem(field.name) : null;
        if (twin && "value" in twin) field.value = twin.value;
      }
    }
    document.title = fetched.title;
    const focused = region.contains(document.activeElement);
    region.replaceWith(next);
    if (focused) next.focus();
  } catch {
    window.location.assign(url);
  }
}
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-filter") || form.method.toLowerCase() !== "get") return;
  event.preventDefault();
  const url = new URL(form.action);
  url.search = new URLSearchParams(new FormData(form)).toString();
  void showResults(url.href, true);
});
document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.target instanceof Element ? event.target.closest("[data-results] a[href]") : null;
  if (!link) return;
  const url = new URL(link.href);
  if (url.origin !== window.location.origin || url.pathname !== window.location.pathname) return;
  event.preventDefault();
  void showResults(url.href, true);
});
window.addEventListener("popstate", () => {
  if (document.querySelector("[data-results]")) void showResults(window.location.href, false);
});
// A page shown again from the back-forward cache gets its forms back.
window.addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  for (const form of document.querySelectorAll("form[data-in-flight]")) {
    delete form.dataset.inFlight;
    for (const button of form.querySelectorAll("button, input[type=submit]")) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
    }
  }
});
// Live events (/dashboard/live-events): each event of the server-sent stream becomes the table's top row. The
// browser reconnects by itself, sending the last event id it received, and the server resumes after it.
(() => {
  const region = document.querySelector("[data-live-events]");
  if (!region || !window.EventSource) return;
  const rows = region.querySelector("tbody");
  const status = document.getElementById("live-status");
  const say = (text) => { if (status) status.textContent = text; };
  say("Connecting...");
  const source = new EventSource(region.getAttribute("data-live-events"));
  source.addEventListener("ready", () => say("Live: new events appear at the top as they happen."));
  source.addEventListener("event", (message) => {
    const event = JSON.parse(message.data);
    const row = document.createElement("tr");
    const link = document.createElement("a");
    link.href = "/dashboard/events/" + encodeURIComponent(event.id);
    const code = document.createElement("code");
    code.textContent = event.id;
    link.append(code);
    const when = document.createElement("time");
    when.dateTime = event.created_at;
    when.textContent = event.created_at.replace("T", " ").replace(/.d+Z$/, "Z");
    const cells = [link, document.createTextNode(event.type), when].map((content) => {
      const cell = document.createElement("td");
      cell.append(content);
      return cell;
    });
    row.append(...cells);
    rows.prepend(row);
    while (rows.children.length > 200) rows.lastElementChild.remove();
  });
  source.addEventListener("error", () => {
    say(source.readyState === EventSource.CLOSED ? "Disconnected: reload the page to follow events again." : "Reconnecting...");
  });
})();
`;

/** The dashboard's icon: an "S" on the accent colour (SVG, so one small file serves every size). */
export const DASHBOARD_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1d4ed8"/><text x="16" y="23" font-family="system-ui,sans-serif" font-size="20" font-weight="700" text-anchor="middle" fill="#fff">S</text></svg>`;
