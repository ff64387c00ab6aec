// `svc listen --forward-to URL`: the project's events, as they are logged, forwarded to a local receiver as signed
// deliveries. The stream is resumed after the last event seen whenever it ends (the service restarting, the
// network), so nothing is lost; an event seen already is not forwarded again.
import { parseArgs } from "node:util";
import { EventsService, type StreamEventsResponse } from "../../gen/svc/v1/events_pb.ts";
import { type CliCommand, say, timestamp } from "./command.ts";
import { CliError, CONNECTION_HELP, CONNECTION_OPTIONS, connectionOf, parsedUrl } from "./connection.ts";
import { followStream } from "./follow-stream.ts";
import { forwardEvent } from "./forward.ts";
import { listenSigningSecret } from "./listen-secret.ts";

/** Event ids remembered to forward each once (a resume repeats none, but a receiver must never see one twice). */
const REMEMBERED_IDS = 10_000;

function forwardUrl(value: string | undefined): URL {
  const example = "http://localhost:3000/webhooks";
  if (!value) throw new CliError(`--forward-to is required: the URL of your webhook receiver, e.g. ${example}`);
  const url = parsedUrl(value, "--forward-to", example);
  if (url.username || url.password) throw new CliError("--forward-to must not carry credentials");
  return url;
}

class SeenIds {
  private readonly ids = new Set<string>();

  /** Whether `id` is new; remembers it (forgetting the oldest past the limit). */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > REMEMBERED_IDS) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}

export const listenCommand: CliCommand = {
  name: "listen",
  summary: "forward the project's events to a local URL, signed as webhook deliveries",
  help: `Usage: svc listen --forward-to URL [--events TYPE,TYPE] [--skip-verify]

Prints "Ready! Your webhook signing secret is whsec_..." (the same secret for the same API key on every run),
then forwards every event of the key's project and environment to URL as a signed delivery (the Svc-Signature,
Svc-Event-Id, Svc-Event-Type headers deliveries carry), printing a line per event and per answer. When the
connection drops it reconnects and resumes after the last event it saw: nothing is lost or forwarded twice.

  --forward-to URL     where to POST each event (http:// or https://)
  --events LIST        only these event types, comma-separated (as an endpoint's event_types; default: all)
  --skip-verify        accept any TLS certificate of an https:// receiver (a self-signed one)

${CONNECTION_HELP}`,
  async run(args, env) {
    const { values } = parseArgs({
      args,
      options: {
        ...CONNECTION_OPTIONS,
        "forward-to": { type: "string" },
        events: { type: "string" },
        "skip-verify": { type: "boolean" },
      },
    });
    if (values.help) {
      say(this.help);
      return 0;
    }
    const url = forwardUrl(values["forward-to"]);
    const connection = connectionOf(values, env);
    const events = connection.client(EventsService);
    const types = values.events
      ? values.events
          .split(",")
          .map((t) => t.trim())
          .filter((t) => t !== "")
      : [];
    const secret = listenSigningSecret(connection.apiKey);
    const forward = { url, secret, skipVerify: values["skip-verify"] === true };

    const seen = new SeenIds();
    let lastSeen: string | undefined;
    await followStream(connection, {
      open: (signal) =>
        events.streamEvents(
          // What is forwarded is `data_json`'s exact text; the deprecated Struct would only cost both sides.
          { types, excludeStructData: true, ...(lastSeen !== undefined ? { startingAfter: lastSeen } : {}) },
          { signal },
        ) as AsyncIterable<StreamEventsResponse>,
      ready: () => say(`Ready! Your webhook signing secret is ${secret} (^C to quit)`),
      message: async (message) => {
        const event = message.event!;
        lastSeen = event.id;
        if (!seen.add(event.id)) return;
        say(`${timestamp()}   --> ${event.type} [${event.id}]`);
        const outcome = await forwardEvent(message, forward);
        const answer = "status" in outcome ? String(outcome.status) : `ERR ${outcome.error}`;
        say(`${timestamp()}  <-- [${answer}] POST ${url.href} [${event.id}]`);
      },
    });
    return 0;
  },
};
