// A handler context for calling a method's implementation (or Connect's invocation of it) directly in a test.
import type { DescMethod } from "@bufbuild/protobuf";
import { type ContextValues, createContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";

export function testHandlerContext(method: DescMethod, contextValues: ContextValues = createContextValues()): HandlerContext {
  return createHandlerContext({
    service: method.parent,
    method,
    protocolName: "test",
    requestMethod: "POST",
    url: "http://localhost/test",
    contextValues,
  });
}
