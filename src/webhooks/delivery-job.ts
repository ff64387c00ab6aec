// The data of a delivery's job (`webhook-attempt`): the delivery it runs, and where its attempts go.

/** The endpoint and the event of a delivery. */
export interface DeliveryPlace {
  endpointId: string;
  eventId: string;
}

export interface DeliveryJobData {
  deliveryId: string;
  /**
   * The delivery's endpoint and event, when the writer of the job knew them (a failed first attempt's retry, a
   * fan-out for the workers, a guarantee's run): its runs read them along with their claim. Jobs without them
   * (replays, recoveries, older jobs) read them after the claim, from the record.
   */
  endpointId?: string;
  eventId?: string;
}

/** The data of a delivery record's job: the delivery, and its endpoint and event. */
export function jobDataOf(delivery: { _id: string; endpoint_id: string; event_id: string }): DeliveryJobData {
  return { deliveryId: delivery._id, endpointId: delivery.endpoint_id, eventId: delivery.event_id };
}

/** The place a job's data names, if it names both. */
export function placeIn(data: DeliveryJobData): DeliveryPlace | undefined {
  return data.endpointId !== undefined && data.eventId !== undefined ? { endpointId: data.endpointId, eventId: data.eventId } : undefined;
}
