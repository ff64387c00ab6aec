// The RPC services one process serves (the registry's, with their interceptors, and gRPC's health and
// reflection services), and one Connect router definition of them for every server: Fastify (Connect,
// gRPC-Web) and the HTTP/2 gRPC server.
import type { DescService } from "@bufbuild/protobuf";
import { createServiceImplSpec, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import type { RegisteredService, ServiceRegistry } from "../api/service-registry.ts";
import { numberCheckingTextDecoder } from "./json-number-strings.ts";

export interface RpcService {
  service: DescService;
  implementation: object;
  interceptors: Interceptor[];
}

export function rpcServices(
  registry: ServiceRegistry,
  interceptorsFor: (service: RegisteredService) => Interceptor[],
  infrastructure: readonly RpcService[] = [],
): RpcService[] {
  return [
    ...registry.services.map((registered) => ({
      service: registered.service,
      implementation: registered.implementation,
      interceptors: interceptorsFor(registered),
    })),
    ...infrastructure,
  ];
}

export function connectRoutes(services: readonly RpcService[]) {
  return (router: ConnectRouter): void => {
    for (const { service, implementation, interceptors } of services) {
      // One registration per method (what router.service does, method by method), so that each method's JSON
      // requests are decoded with a text decoder that knows its input (json-number-strings.ts).
      for (const { method, impl } of Object.values(createServiceImplSpec(service, implementation as never).methods)) {
        const jsonOptions = {
          // JSON requests (Connect, gRPC-Web, gRPC) refuse unknown fields with InvalidArgument, as REST refuses
          // them with 422, instead of dropping them silently. JSON answers use the proto field names (snake_case),
          // the names of the contract and of REST, for every service alike; JSON requests may use either name.
          ignoreUnknownFields: false,
          useProtoFieldName: true,
          // JSON answers show every field, false, zero and empty ones included, as REST does: a sandbox key's
          // `livemode: false` is there to read, not left for the client to infer from its absence.
          alwaysEmitImplicit: true,
          // A number given as a string must be a decimal literal.
          textDecoder: numberCheckingTextDecoder(method.input),
        };
        router.rpc(method, impl as never, { interceptors, jsonOptions });
      }
    }
  };
}
