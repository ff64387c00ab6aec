// Events written in the same document write as the state change they report, until the relay logs them.

/** An event waiting in its source document's outbox. */
export interface OutboxEvent {
  id: string;
  type: string;
  created_at: Date;
  data: Record<string, unknown>;
}
