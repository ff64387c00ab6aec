// The services one process serves, and how to call a method of them in process (the REST gateway does).
import { create, isMessage, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";

export interface RegisteredService {
  service: DescService;
  implementation: object;
  /** Public services take API keys; the others (AdminService) take the admin token. */
  visibility: "public" | "internal";
}

type UnaryMethod = (request: Message, context: HandlerContext) => Promise<unknown> | unknown;

export class ServiceRegistry {
  private readonly methods = new Map<DescMethod, UnaryMethod>();

  constructor(readonly services: readonly RegisteredService[]) {
    for (const { service, implementation } of services) {
      for (const method of service.methods) {
        const fn = (implementation as Record<string, unknown>)[method.localName];
        if (typeof fn !== "function") throw new Error(`${service.typeName}.${method.name} is not implemented`);
        this.methods.set(method, fn.bind(implementation) as UnaryMethod);
      }
    }
  }

  publicServices(): DescService[] {
    return this.services.filter((s) => s.visibility === "public").map((s) => s.service);
  }

  async invoke(method: DescMethod, request: Message, context: HandlerContext): Promise<Message> {
    const fn = this.methods.get(method);
    if (!fn) throw new Error(`${method.parent.typeName}.${method.name} is not registered`);
    const result = await fn(request, context);
    // Implementations may answer an init object, as Connect allows; callers get a full message.
    return isMessage(result, method.output) ? result : create(method.output, result as never);
  }
}
