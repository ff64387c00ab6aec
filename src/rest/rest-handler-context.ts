// The HandlerContext a REST call runs its method with. Connect's createHandlerContext builds three Headers and
// two abort signals for every call; a REST method reads none of them (the gateway has already taken what the
// call needs from the request), so this context builds each only if it is read.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { ContextValues, HandlerContext } from "@connectrpc/connect";

export class RestHandlerContext implements HandlerContext {
  readonly protocolName = "rest";
  private header: Headers | undefined;
  private responseHeaders: Headers | undefined;
  private responseTrailers: Headers | undefined;
  private abortSignal: AbortSignal | undefined;

  constructor(
    readonly service: DescService,
    readonly method: DescMethod,
    readonly requestMethod: string,
    readonly url: string,
    private readonly rawHeaders: Record<string, string | string[] | undefined>,
    readonly values: ContextValues,
  ) {}

  /** A REST call has no deadline. */
  timeoutMs(): number | undefined {
    return undefined;
  }

  /** Never aborted: the gateway lets a method finish its writes when the client goes away. */
  get signal(): AbortSignal {
    this.abortSignal ??= new AbortController().signal;
    return this.abortSignal;
  }

  get requestHeader(): Headers {
    this.header ??= new Headers(
      Object.entries(this.rawHeaders).flatMap(([name, value]) =>
        value === undefined ? [] : [[name, Array.isArray(value) ? value.join(", ") : value] as [string, string]],
      ),
    );
    return this.header;
  }

  get responseHeader(): Headers {
    this.responseHeaders ??= new Headers();
    return this.responseHeaders;
  }

  get responseTrailer(): Headers {
    this.responseTrailers ??= new Headers();
    return this.responseTrailers;
  }
}
