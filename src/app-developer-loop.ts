// The developer loop: the event log and its live streams, the request log (written off the calls' path) and its
// live tails.
import { EventsService } from "../gen/svc/v1/events_pb.ts";
import { RequestLogsService } from "../gen/svc/v1/request_logs_pb.ts";
import type { RegisteredService } from "./api/service-registry.ts";
import { LiveEvents } from "./events/live-events.ts";
import { EventsServiceImpl } from "./services/events-service.ts";
import { LiveRequestLogs } from "./services/live-request-logs.ts";
import { RequestLogsServiceImpl } from "./services/request-logs-service.ts";
import { DEFAULT_REQUEST_LOG_WRITER, RequestLogWriter } from "./store/request-log-writer.ts";
import type { Foundation } from "./app-foundation.ts";
import { type Worker, worker } from "./app-workers.ts";

export function wireDeveloperLoop({ config, clock, repositories, replicaSet, onError }: Foundation) {
  // One change stream per process, opened with the first event stream, fanned out to all of them.
  const liveEvents = new LiveEvents(repositories.events, {
    changeStreams: replicaSet,
    maxBuffered: config.maxStreamBacklog,
    onError: (error) => onError(error, "live events"),
  });
  // The same for the request log's tails.
  const liveRequestLogs = new LiveRequestLogs(repositories.requestLogs, {
    changeStreams: replicaSet,
    maxBuffered: config.maxStreamBacklog,
    onError: (error) => onError(error, "live request logs"),
  });
  // Calls are recorded off their path: a write that fails is logged here and costs the call nothing.
  const requestLogWriter = new RequestLogWriter(repositories.requestLogs, {
    ...DEFAULT_REQUEST_LOG_WRITER,
    onError: (error) => onError(error, "request log"),
  });
  const services: RegisteredService[] = [
    {
      service: EventsService,
      visibility: "public",
      implementation: new EventsServiceImpl({ events: repositories.events, live: liveEvents, clock, changeStreams: replicaSet }),
    },
    { service: RequestLogsService, visibility: "public", implementation: new RequestLogsServiceImpl(repositories.requestLogs, liveRequestLogs) },
  ];
  // Open streams and tails end cleanly, before the servers close: their clients reconnect (elsewhere) and resume
  // with the last id seen.
  const liveStreams: Worker = worker({
    stop: async () => {
      await Promise.all([liveEvents.drain(), liveRequestLogs.drain()]);
    },
  });
  // The entries of the last calls are written once the servers have answered them.
  const requestLog: Worker = worker({ stop: () => requestLogWriter.flush() });
  return { liveEvents, liveRequestLogs, requestLogWriter, services, workers: { liveStreams, requestLog } };
}
