// Request log entries as they are written, for the open TailRequestLogs streams of this process: the request
// log's live feed (store/live-inserts.ts), each subscription filtered as ListRequestLogs filters.
import type { LiveInsertsOptions } from "../store/live-inserts.ts";
import { LiveInserts } from "../store/live-inserts.ts";
import {
  matchesRequestLogFilters,
  type RequestLogDocument,
  type RequestLogFilters,
  type RequestLogRepository,
} from "../store/request-log-repository.ts";

export class LiveRequestLogs extends LiveInserts<RequestLogDocument, RequestLogFilters> {
  constructor(logs: RequestLogRepository, options: LiveInsertsOptions) {
    super(logs, (filters) => (log) => matchesRequestLogFilters(log, filters), options);
  }
}
