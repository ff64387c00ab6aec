// The services one process serves, and how to call a method of them in process (the REST gateway does).
import { create, isMessage, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";

export interface RegisteredService {
  service: DescService;
  implementation: object;
  /** Public services take API keys; the others (AdminService) take the admin token. */
  visibility: "public" | "internal";
  /**
   * By method local name: what a replayed answer becomes when part of it may no longer be true (a signing
   * secret since rotated must not be shown again). Methods without one replay their stored answer as it is.
   */
  replays?: Record<string, ReplayRefresh>;
  /**
   * By method local name: what is kept of an answer for replay when part of it must never be stored (a new API
   * key's secret, shown once). Methods without one keep their answer whole.
   */
  kept?: Record<string, (response: never) => Message>;
}

/** Turns a stored answer into the one to replay now, in the caller's context. */
export type ReplayRefresh = (response: never, context: HandlerContext) => Promise<Message>;

type UnaryMethod = (request: Message, context: HandlerContext) => Promise<unknown> | unknown;

export class ServiceRegistry {
  private readonly methods = new Map<DescMethod, UnaryMethod>();
  private readonly replays = new Map<DescMethod, ReplayRefresh>();
  private readonly kept = new Map<DescMethod, (response: never) => Message>();

  constructor(readonly services: readonly RegisteredService[]) {
    for (const { service, implementation, replays, kept } of services) {
      const methodNamed = (name: string) => {
        const method = service.methods.find((m) => m.localName === name);
        if (!method) throw new Error(`${service.typeName} has no method ${name}`);
        return method;
      };
      for (const [name, refresh] of Object.entries(replays ?? {})) this.replays.set(methodNamed(name), refresh);
      for (const [name, keep] of Object.entries(kept ?? {})) this.kept.set(methodNamed(name), keep);
      for (const method of service.methods) {
        const fn = (implementation as Record<string, unknown>)[method.localName];
        if (typeof fn !== "function") throw new Error(`${service.typeName}.${method.name} is not implemented`);
        this.methods.set(method, fn.bind(implementation) as UnaryMethod);
      }
    }
  }

  /** What is stored of an answer of `method` for replay. */
  keptForm(method: DescMethod, response: Message): Message {
    const keep = this.kept.get(method);
    return keep ? keep(response as never) : response;
  }

  /** The answer to replay for a stored one of `method`. */
  async refreshReplay(method: DescMethod, response: Message, context: HandlerContext): Promise<Message> {
    const refresh = this.replays.get(method);
    return refresh ? refresh(response as never, context) : response;
  }

  /** A server-streaming method run in process (the dashboard's live views): the messages it yields. */
  openStream(method: DescMethod, request: Message, context: HandlerContext): AsyncIterable<Message> {
    const fn = this.methods.get(method);
    if (!fn || method.methodKind !== "server_streaming") throw new Error(`${method.parent.typeName}.${method.name} is no registered stream`);
    return fn(request, context) as unknown as AsyncIterable<Message>;
  }

  async invoke(method: DescMethod, request: Message, context: HandlerContext): Promise<Message> {
    const fn = this.methods.get(method);
    if (!fn) throw new Error(`${method.parent.typeName}.${method.name} is not registered`);
    const result = await fn(request, context);
    // Implementations may answer an init object, as Connect allows; callers get a full message.
    return isMessage(result, method.output) ? result : create(method.output, result as never);
  }
}
