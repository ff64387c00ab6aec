// svc.v1.EventsService: the event log of the caller's project and environment, newest first, and its live stream.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type EventsService,
  GetEventResponseSchema,
  ListEventsResponseSchema,
  type GetEventRequest,
  type ListEventsRequest,
  type StreamEventsRequest,
} from "../../gen/svc/v1/events_pb.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { EVENT_TYPES, isEventType } from "../domain/event-types.ts";
import type { EventRepository } from "../store/event-repository.ts";
import { isBinaryContentType } from "../messages/encoded-once.ts";
import { eventMessage } from "../messages/event-messages.ts";
import { listParameters, listWindow } from "./pagination.ts";
import { tenantOf } from "../access/principal.ts";
import { eventStream, type EventStreamDeps } from "./event-stream.ts";

export class EventsServiceImpl implements ServiceImpl<typeof EventsService> {
  private readonly events: EventRepository;

  constructor(private readonly deps: EventStreamDeps) {
    this.events = deps.events;
  }

  async listEvents(request: ListEventsRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const parameters = listParameters(request);
    if (request.type !== undefined && !isEventType(request.type)) {
      throw validationError("type", `type must be one of ${EVENT_TYPES.join(", ")}.`);
    }
    const window = await listWindow(parameters, (id) => this.events.find(scope, id));
    const page = await this.events.list(scope, { ...window, ...(request.type !== undefined ? { type: request.type } : {}) });
    return create(ListEventsResponseSchema, { data: page.items.map((event) => eventMessage(event)), hasMore: page.hasMore });
  }

  async getEvent(request: GetEventRequest, context: HandlerContext) {
    const event = await this.events.find(tenantOf(context), request.id);
    if (!event) throw svcError("event_not_found");
    return create(GetEventResponseSchema, { event: eventMessage(event) });
  }

  streamEvents(request: StreamEventsRequest, context: HandlerContext) {
    // Binary codecs get each message's encoding made once for all the streams that send it; JSON ones the message.
    const binary = isBinaryContentType(context.requestHeader.get("content-type"));
    return eventStream(this.deps, tenantOf(context), request, context.signal, binary);
  }
}
