// Logged events as the public message.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EventSchema, type Event } from "../../gen/svc/v1/events_pb.ts";
import type { EventDocument } from "../store/event-repository.ts";

export function eventMessage(doc: EventDocument): Event {
  return create(EventSchema, {
    id: doc._id,
    type: doc.type,
    createdAt: timestampFromDate(doc.created_at),
    livemode: doc.livemode,
    data: doc.data as JsonObject,
  });
}
