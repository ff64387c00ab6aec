// `svc events list|get|resend`: the event log of the key's project and environment, and sending an event again
// to a webhook endpoint (a replay of its delivery there).
import { parseArgs } from "node:util";
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { WebhookEndpointsService } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { eventJson } from "../representations/events.ts";
import { type CliCommand, say } from "./command.ts";
import { CliError, CONNECTION_HELP, CONNECTION_OPTIONS, type Connection, connectionOf, describeFailure } from "./connection.ts";

const USAGE = `Usage: svc events list [--limit N] [--type TYPE] [--starting-after EVENT_ID]
       svc events get EVENT_ID
       svc events resend EVENT_ID --webhook-endpoint ENDPOINT_ID

  list     the newest events first, one line each: created_at, id, type
  get      one event, as JSON
  resend   delivers the event to the endpoint again (a replay of its delivery there, signed afresh)`;

async function list(
  connection: Connection,
  values: { limit?: string | undefined; type?: string | undefined; "starting-after"?: string | undefined },
): Promise<void> {
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !Number.isInteger(limit)) throw new CliError(`--limit must be a whole number, not ${values.limit}`);
  const page = await connection.client(EventsService).listEvents({
    ...(limit !== undefined ? { limit } : {}),
    ...(values.type !== undefined ? { type: values.type } : {}),
    ...(values["starting-after"] !== undefined ? { startingAfter: values["starting-after"] } : {}),
  });
  for (const event of page.data.map(eventJson)) say(`${event.created_at}  ${event.id}  ${event.type}`);
  if (page.hasMore) say(`(more: svc events list --starting-after ${page.data.at(-1)!.id})`);
}

async function get(connection: Connection, id: string): Promise<void> {
  const { event } = await connection.client(EventsService).getEvent({ id });
  say(JSON.stringify(eventJson(event!), null, 2));
}

async function resend(connection: Connection, id: string, endpointId: string | undefined): Promise<void> {
  if (!endpointId) throw new CliError("svc events resend needs --webhook-endpoint ENDPOINT_ID: the endpoint to send the event to again");
  const endpoints = connection.client(WebhookEndpointsService);
  // The event's delivery to that endpoint, newest deliveries first.
  let startingAfter: string | undefined;
  for (;;) {
    const page = await endpoints.listWebhookDeliveries({ endpointId, limit: 100, ...(startingAfter ? { startingAfter } : {}) });
    const delivery = page.data.find((d) => d.eventId === id);
    if (delivery) {
      const { webhookDelivery } = await endpoints.replayWebhookDelivery({ endpointId, id: delivery.id });
      say(`Resent ${id} to ${endpointId}: delivery ${webhookDelivery!.id} is ${webhookDelivery!.status}`);
      return;
    }
    if (!page.hasMore)
      throw new CliError(`webhook endpoint ${endpointId} has no delivery of ${id} (it was not subscribed to it, or the delivery expired)`);
    startingAfter = page.data.at(-1)!.id;
  }
}

export const eventsCommand: CliCommand = {
  name: "events",
  summary: "list, get or resend the project's events",
  help: `${USAGE}\n\n${CONNECTION_HELP}`,
  async run(args, env) {
    const { values, positionals } = parseArgs({
      args,
      options: {
        ...CONNECTION_OPTIONS,
        limit: { type: "string" },
        type: { type: "string" },
        "starting-after": { type: "string" },
        "webhook-endpoint": { type: "string" },
      },
      allowPositionals: true,
    });
    if (values.help) {
      say(this.help);
      return 0;
    }
    const [action, id] = positionals;
    const connection = connectionOf(values, env);
    try {
      if (action === "list") await list(connection, values);
      else if (action === "get" && id) await get(connection, id);
      else if (action === "resend" && id) await resend(connection, id, values["webhook-endpoint"]);
      else throw new CliError(`give list, get EVENT_ID or resend EVENT_ID (svc events --help)`);
    } catch (error) {
      throw new CliError(describeFailure(error, connection));
    }
    return 0;
  },
};
