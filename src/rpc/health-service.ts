// grpc.health.v1.Health, as Kubernetes gRPC probes and load balancers call it: SERVING once the process listens,
// NOT_SERVING from the moment it starts draining (App.close), for the whole server ("") and for each service
// it serves by name; an unknown name is NOT_FOUND (Check) or SERVICE_UNKNOWN (Watch). Watch answers the
// current status, then each change; a drain ends it after NOT_SERVING, so a draining server is not held open.
import { create, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
} from "../../gen/grpc/health/v1/health_pb.ts";

export { Health, ServingStatus };

export class HealthStatus {
  private status: ServingStatus = ServingStatus.NOT_SERVING;
  private draining = false;
  private readonly watchers = new Set<() => void>();

  constructor(private readonly services: readonly DescService[]) {}

  /** The process listens and answers. */
  serving(): void {
    if (this.draining) return;
    this.set(ServingStatus.SERVING);
  }

  /** The process is stopping: every name answers NOT_SERVING from now on, and watches end after saying so. */
  drain(): void {
    this.draining = true;
    this.set(ServingStatus.NOT_SERVING);
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** The status of `service` ("" for the whole server), or undefined for a name this server does not serve. */
  statusOf(service: string): ServingStatus | undefined {
    if (service === "" || this.services.some((s) => s.typeName === service)) return this.status;
    return undefined;
  }

  names(): string[] {
    return ["", ...this.services.map((s) => s.typeName)];
  }

  /** Calls `listener` on every change until the returned function is called. */
  onChange(listener: () => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private set(status: ServingStatus): void {
    if (this.status === status) return;
    this.status = status;
    for (const watcher of [...this.watchers]) watcher();
  }
}

function response(status: ServingStatus): HealthCheckResponse {
  return create(HealthCheckResponseSchema, { status });
}

export function healthService(health: HealthStatus): ServiceImpl<typeof Health> {
  return {
    check(request: HealthCheckRequest) {
      const status = health.statusOf(request.service);
      if (status === undefined) throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      return response(status);
    },
    list() {
      const statuses: Record<string, HealthCheckResponse> = {};
      for (const name of health.names()) statuses[name] = response(health.statusOf(name)!);
      return create(HealthListResponseSchema, { statuses });
    },
    async *watch(request: HealthCheckRequest, context: HandlerContext) {
      let wake: () => void = () => {};
      const stop = health.onChange(() => wake());
      const aborted = new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve(), { once: true }));
      try {
        let last: ServingStatus | undefined;
        for (;;) {
          const status = health.statusOf(request.service) ?? ServingStatus.SERVICE_UNKNOWN;
          if (status !== last) {
            yield response(status);
            last = status;
          }
          if (health.isDraining || context.signal.aborted) return;
          await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
        }
      } finally {
        stop();
      }
    },
  };
}
