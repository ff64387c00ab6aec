// Connect's streaming invocation as patches/@connectrpc+connect+2.1.2.patch leaves it: a native async generator (the
// published build's down-levelled one took several more promise turns a message, and every message of every stream
// passes it), with the published behaviour: the interceptors run at the first read, their headers are the call's,
// the messages pass in order, their trailers are the call's once the messages end, and a reader that stops early
// stops the method's iterator.
import { create } from "@bufbuild/protobuf";
import { createMethodImplSpec, type Interceptor } from "@connectrpc/connect";
import { transformInvokeImplementation } from "@connectrpc/connect/protocol";
import { expect } from "chai";
import { EventsService, StreamEventsRequestSchema, type StreamEventsResponse } from "../../gen/svc/v1/events_pb.ts";
import { testHandlerContext } from "../support/handler-context.ts";

const method = EventsService.method.streamEvents;

function handlerContext() {
  return testHandlerContext(method);
}

async function* only<T>(message: T): AsyncIterable<T> {
  yield message;
}

describe("Connect's streaming invocation (patched)", () => {
  it("is a native async generator", () => {
    const spec = createMethodImplSpec(method, async function* () {});
    const messages = transformInvokeImplementation(spec, handlerContext(), [])(only(create(StreamEventsRequestSchema)));
    expect(Object.prototype.toString.call(messages)).to.equal("[object AsyncGenerator]");
  });

  it("runs the interceptors at the first read, passes the messages in order, and takes their headers and trailers", async () => {
    const seen: string[] = [];
    const spec = createMethodImplSpec(method, async function* () {
      seen.push("method");
      yield { projectId: "a" };
      yield { projectId: "b" };
    });
    // Headers and trailers of its own, which the invocation copies into the call's: the headers at once, the trailers
    // once the messages have ended.
    const interceptor: Interceptor = (next) => async (request) => {
      seen.push("interceptor");
      return { ...(await next(request)), header: new Headers({ "x-first": "1" }), trailer: new Headers({ "x-last": "2" }) };
    };
    const context = handlerContext();
    const messages = transformInvokeImplementation(spec, context, [interceptor])(only(create(StreamEventsRequestSchema)))[Symbol.asyncIterator]();
    expect(seen).to.deep.equal([]);
    const first = await messages.next();
    expect([(first.value as StreamEventsResponse).projectId, context.responseHeader.get("x-first")]).to.deep.equal(["a", "1"]);
    expect(context.responseTrailer.get("x-last")).to.equal(null);
    expect(((await messages.next()).value as StreamEventsResponse).projectId).to.equal("b");
    expect(await messages.next()).to.deep.equal({ done: true, value: undefined });
    expect(context.responseTrailer.get("x-last")).to.equal("2");
    expect(seen).to.deep.equal(["interceptor", "method"]);
  });

  it("stops the method's iterator when its reader stops early", async () => {
    let stopped = false;
    const spec = createMethodImplSpec(method, async function* () {
      try {
        for (;;) yield { projectId: "a" };
      } finally {
        stopped = true;
      }
    });
    const messages = transformInvokeImplementation(spec, handlerContext(), [])(only(create(StreamEventsRequestSchema)))[Symbol.asyncIterator]();
    await messages.next();
    await messages.return?.(undefined);
    expect(stopped).to.equal(true);
    expect(await messages.next()).to.deep.equal({ done: true, value: undefined });
  });
});
