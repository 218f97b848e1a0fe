/** Error types of DESIGN.md section 5, keyed by HTTP status. */
export const ERROR_TYPES = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "insufficient_funds",
  403: "permission_error",
  404: "not_found_error",
  405: "invalid_request_error",
  408: "request_timeout",
  409: "conflict_error",
  413: "request_too_large",
  429: "rate_limit_error",
  /** The client went away; only ever seen in usage rows, never sent. */
  499: "client_closed_request",
  500: "server_error",
  502: "upstream_error",
  503: "unavailable",
  504: "upstream_timeout",
} as const;

export type ErrorStatus = keyof typeof ERROR_TYPES;

/**
 * An error the gateway means to show the caller: its message is safe to return as is.
 * Anything else thrown is rendered as a generic 500 and its detail stays in the process.
 */
export class GatewayError extends Error {
  constructor(
    readonly status: ErrorStatus,
    message: string,
    /** Extra response headers (Retry-After, x-ratelimit-*). */
    readonly headers: Record<string, string> = {},
    /** The request field at fault, when one is: OpenAI's `param`, which its SDK shows as `error.param`. */
    readonly param?: string,
  ) {
    super(message);
    this.name = "GatewayError";
  }

  get type(): string {
    return ERROR_TYPES[this.status];
  }
}

/** The spec's error body: `{"error":{"message","type","code"}}` with code equal to the status. */
export function errorBody(status: ErrorStatus, message: string) {
  return { error: { message, type: ERROR_TYPES[status], code: status } };
}

export const badRequest = (message: string, param?: string) => new GatewayError(400, message, {}, param);
/** A request body that broke off: the client hung up mid-request, which is not the gateway's error. */
export const bodyCutOff = () => new GatewayError(499, "The client closed the request before its body was complete");
/**
 * A request body that did not come in time (GATEWAY_BODY_TIMEOUT_MS): the connection is
 * closed with the answer, so a client that holds a body back holds nothing of the gateway's.
 */
export const bodyTimedOut = (ms: number) =>
  new GatewayError(408, `The request body did not arrive in time: the gateway waits ${ms} ms for it`, { connection: "close" });
export const notFound = (message: string) => new GatewayError(404, message);
