import { GatewayError } from "../errors/gateway-error.ts";

/**
 * How an upstream call failed; decides failover and what the caller sees. `unusable`: the
 * upstream answered, but the model's answer gives a caller of another format nothing to use
 * (Gemini's MALFORMED_FUNCTION_CALL: a call it began and could not write).
 */
export type UpstreamFailure = "connect" | "timeout" | "status" | "protocol" | "unusable";

/** A failed upstream call, typed at the adapter boundary. Its message never holds a secret. */
export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly upstreamStatus?: number,
    /** The upstream's Retry-After, in seconds, when it sent one. */
    readonly retryAfterSeconds?: number,
    /** The request field the upstream named as at fault (OpenAI's `param`). */
    readonly param?: string,
    /** The upstream's own code for the error (OpenAI's `code`), to recognise it by; never shown. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "UpstreamError";
  }

  /**
   * Whether the next channel may be tried: connect errors, timeouts, 429 and 5xx, and the
   * statuses that say this channel is misconfigured (3xx: its base URL; 401, 403: its key;
   * 404: its model mapping) or unpaid (402: its account at the provider is out of credit, as
   * DeepSeek and OpenRouter answer; the caller's own balance was checked by the gateway). So are protocol failures: a 2xx body that broke off or is not
   * the API's answer is seen before any byte reaches the caller, and counting it as a
   * failure lets the breaker cool a channel that answers 200 with garbage. A 400-class error
   * about the request itself would fail everywhere, so it is final. An unusable answer moves
   * on too: another channel's try at the same request may well come out whole.
   */
  get retryable(): boolean {
    if (this.failure !== "status") return true;
    const status = this.upstreamStatus ?? 0;
    return (status >= 300 && status < 400) || (status >= 401 && status <= 403) || status === 404 || status === 408 || status === 429 || status >= 500;
  }

  /**
   * Whether the failure counts against its channel in the breaker. An unusable answer is the
   * model's doing, not the channel's: a model that misfires now and then must not cool a
   * healthy channel.
   */
  get faultOfChannel(): boolean {
    return this.failure !== "unusable";
  }

  /**
   * The caller's error. The caller's own mistakes (400, 413, 422) stay theirs; an overloaded
   * upstream is a 503; a channel's bad credentials or any other upstream fault is the
   * gateway's 502, never the caller's 401.
   */
  toGatewayError(): GatewayError {
    if (this.failure === "timeout") return new GatewayError(504, `Upstream timed out: ${this.message}`);
    const status = this.upstreamStatus;
    if (status === 429) {
      return new GatewayError(429, "The upstream is rate limiting this model; retry later", {
        "retry-after": String(this.retryAfterSeconds ?? 1),
      });
    }
    // A request too large for the upstream stays a 413: the SDKs raise their own class for it.
    if (status === 413) return new GatewayError(413, this.message, {}, this.param);
    if (status === 400 || status === 422) return new GatewayError(400, this.message, {}, this.param);
    // An upstream that says it is overloaded (503; Anthropic's own 529, overloaded_error) is
    // busy, not broken: a 503, as Gemini answers its own overload (the genai SDK's ApiError
    // 503 UNAVAILABLE) and the nearest standard status to Anthropic's, with its Retry-After.
    // A 502 told the caller's retry code that the gateway had failed.
    if (status === 503 || status === 529) {
      const retryAfter: Record<string, string> = this.retryAfterSeconds === undefined ? {} : { "retry-after": String(this.retryAfterSeconds) };
      return new GatewayError(503, `The upstream is overloaded; retry later: ${this.message}`, retryAfter);
    }
    return new GatewayError(502, `Upstream failed: ${this.message}`);
  }
}

/**
 * An upstream that sent more at once than GATEWAY_MAX_UPSTREAM_BODY_BYTES lets the gateway
 * hold: `what` says of what ("the upstream's answer is larger than"). A protocol failure, so
 * before any byte reached the caller the next channel is tried.
 */
export function pastBodyLimit(what: string, maxBytes: number): UpstreamError {
  return new UpstreamError("protocol", `${what} GATEWAY_MAX_UPSTREAM_BODY_BYTES (${maxBytes} bytes)`);
}
