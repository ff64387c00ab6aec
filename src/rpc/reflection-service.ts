// gRPC server reflection (grpc.reflection.v1 and the older v1alpha that grpcurl and some tools still call), so
// buf curl, grpcurl and Postman can list and call the services without the .proto files. It answers from the
// descriptors generated into gen/: each file is sent with every file it imports. Anyone may ask, so an anonymous
// caller (or one with an API key) is told of the public services only; the internal ones (AdminService) are
// described to callers presenting the admin token, the only ones who can call them.
import { create, createRegistry, toBinary, type DescFile, type DescService, type Registry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.ts";
import { file_google_rpc_status } from "../../gen/google/rpc/status_pb.ts";
import {
  ServerReflection as ServerReflectionV1,
  ServerReflectionResponseSchema as ResponseV1,
  type ServerReflectionRequest,
} from "../../gen/grpc/reflection/v1/reflection_pb.ts";
import {
  ServerReflection as ServerReflectionV1alpha,
  ServerReflectionResponseSchema as ResponseV1alpha,
} from "../../gen/grpc/reflection/v1alpha/reflection_pb.ts";

export { ServerReflectionV1, ServerReflectionV1alpha };

const ERROR_DETAIL_FILES = [file_google_rpc_error_details, file_google_rpc_status];

/** gRPC's NOT_FOUND, as `ErrorResponse.error_code` carries it. */
const NOT_FOUND = 5;

class Descriptors {
  readonly files = new Map<string, DescFile>();
  readonly registry: Registry;

  constructor(readonly services: readonly DescService[]) {
    const visit = (file: DescFile) => {
      if (this.files.has(file.name)) return;
      this.files.set(file.name, file);
      for (const dependency of file.dependencies) visit(dependency);
    };
    for (const service of services) visit(service.file);
    // The types every refusal carries in its details (google.rpc.Status, ErrorInfo), so tools decode a refusal's
    // reason and metadata instead of printing base64; asked for by name too.
    for (const file of ERROR_DETAIL_FILES) visit(file);
    this.registry = createRegistry(...this.files.values());
  }

  /**
   * The file and every file it imports, each once, as serialized FileDescriptorProtos, then the error detail files:
   * tools such as buf curl resolve a service's file with what comes with it and decode a refusal's details from
   * that set, never asking for the detail's type on its own.
   */
  withDependencies(file: DescFile): Uint8Array[] {
    const seen = new Set<string>();
    const result: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      result.push(toBinary(FileDescriptorProtoSchema, f.proto));
      for (const dependency of f.dependencies) visit(dependency);
    };
    visit(file);
    for (const detailFile of ERROR_DETAIL_FILES) visit(detailFile);
    return result;
  }

  /** The file declaring a service, method, message, enum or extension by its full name. */
  fileOfSymbol(symbol: string): DescFile | undefined {
    const found = this.registry.get(symbol);
    if (found)
      return found.kind === "extension" || found.kind === "message" || found.kind === "enum" || found.kind === "service" ? found.file : undefined;
    // A method (`pkg.Service.Method`) or an enum value, a field: the file of what contains it.
    const dot = symbol.lastIndexOf(".");
    return dot > 0 ? this.fileOfSymbol(symbol.slice(0, dot)) : undefined;
  }
}

type Answer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

function answer(descriptors: Descriptors, request: ServerReflectionRequest): Answer {
  const notFound = (errorMessage: string): Answer => ({ case: "errorResponse", value: { errorCode: NOT_FOUND, errorMessage } });
  const files = (file: DescFile | undefined, what: string): Answer =>
    file ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: descriptors.withDependencies(file) } } : notFound(`${what} not found`);
  const { messageRequest } = request;
  switch (messageRequest.case) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: descriptors.services.map((s) => ({ name: s.typeName })) } };
    case "fileByFilename":
      return files(descriptors.files.get(messageRequest.value), `file ${messageRequest.value}`);
    case "fileContainingSymbol":
      return files(descriptors.fileOfSymbol(messageRequest.value), `symbol ${messageRequest.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = messageRequest.value;
      const message = descriptors.registry.getMessage(containingType);
      const extension = message ? descriptors.registry.getExtensionFor(message, extensionNumber) : undefined;
      return files(extension?.file, `extension ${extensionNumber} of ${containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const message = descriptors.registry.getMessage(messageRequest.value);
      if (!message) return notFound(`type ${messageRequest.value} not found`);
      const numbers: number[] = [];
      for (const type of descriptors.registry)
        if (type.kind === "extension" && type.extendee.typeName === message.typeName) numbers.push(type.number);
      return { case: "allExtensionNumbersResponse", value: { baseTypeName: message.typeName, extensionNumber: numbers } };
    }
    default:
      return { case: "errorResponse", value: { errorCode: 3 /* INVALID_ARGUMENT */, errorMessage: "the request names no question" } };
  }
}

function reflection<R>(descriptorsFor: (context: HandlerContext) => Descriptors, responseSchema: typeof ResponseV1 | typeof ResponseV1alpha) {
  return {
    async *serverReflectionInfo(requests: AsyncIterable<ServerReflectionRequest>, context: HandlerContext) {
      const descriptors = descriptorsFor(context);
      for await (const request of requests) {
        yield create(responseSchema as typeof ResponseV1, {
          validHost: request.host,
          originalRequest: request,
          messageResponse: answer(descriptors, request) as never,
        }) as R;
      }
    },
  };
}

/**
 * Both reflection services: they describe `publicServices` (these two included, when listed) to every caller,
 * and `internalServices` too to a caller whose request `isInternal` accepts.
 */
export function reflectionServices(
  publicServices: readonly DescService[],
  internalServices: readonly DescService[],
  isInternal: (requestHeader: Headers) => boolean,
): {
  v1: ServiceImpl<typeof ServerReflectionV1>;
  v1alpha: ServiceImpl<typeof ServerReflectionV1alpha>;
} {
  const everyone = new Descriptors(publicServices);
  const internal = new Descriptors([...publicServices, ...internalServices]);
  const descriptorsFor = (context: HandlerContext) => (isInternal(context.requestHeader) ? internal : everyone);
  return {
    v1: reflection(descriptorsFor, ResponseV1) as never,
    v1alpha: reflection(descriptorsFor, ResponseV1alpha) as never,
  };
}
