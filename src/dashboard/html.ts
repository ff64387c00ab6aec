// The dashboard's one template helper: a tagged template whose interpolations are escaped unless they are
// themselves templates. Every user-provided string (a description, a URL, an event's JSON) goes through it, so
// `<script>` in a description renders as text. There is no other way to build markup in the dashboard.

/** Markup already escaped (built by `html`); only `html` and `raw` make one. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** A value interpolated into a template: markup stays, lists are joined, null/undefined/false are nothing. */
function render(value: unknown): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let markup = strings[0]!;
  for (let i = 0; i < values.length; i++) markup += render(values[i]) + strings[i + 1]!;
  return new Html(markup);
}

/** Markup written by the dashboard itself (never user data): a constant fragment. */
export function raw(markup: string): Html {
  return new Html(markup);
}
