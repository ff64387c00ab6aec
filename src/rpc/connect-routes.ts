// One Connect router definition for every server: Fastify (Connect, gRPC-Web) and the HTTP/2 gRPC server.
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import type { RegisteredService, ServiceRegistry } from "../api/service-registry.ts";

export function connectRoutes(registry: ServiceRegistry, interceptorsFor: (service: RegisteredService) => Interceptor[]) {
  return (router: ConnectRouter): void => {
    for (const registered of registry.services) {
      router.service(registered.service, registered.implementation as never, {
        interceptors: interceptorsFor(registered),
        // JSON requests (Connect, gRPC-Web, gRPC) refuse unknown fields with InvalidArgument, as REST refuses
        // them with 422, instead of dropping them silently.
        jsonOptions: { ignoreUnknownFields: false },
      });
    }
  };
}
