// Logged events as the public message.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EventSchema, type Event } from "../../gen/svc/v1/events_pb.ts";
import type { EventDocument } from "../store/event-repository.ts";

export interface EventMessageOptions {
  /**
   * Whether to fill the deprecated `data` Struct beside `data_json`. Its numbers are doubles, and building and
   * encoding it is most of an event message's cost; streams opened with `exclude_struct_data` leave it out.
   */
  structData: boolean;
}

/** The event with its data as exact JSON text (`data_json`, the webhook body's text) and, by default, as a Struct. */
export function eventMessage(doc: EventDocument, options: EventMessageOptions = { structData: true }): Event {
  return create(EventSchema, {
    id: doc._id,
    type: doc.type,
    createdAt: timestampFromDate(doc.created_at),
    livemode: doc.livemode,
    dataJson: JSON.stringify(doc.data),
    ...(options.structData ? { data: doc.data as JsonObject } : {}),
  });
}
