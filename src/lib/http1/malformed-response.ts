/** An answer that is not HTTP/1.1, or breaks its own framing: the connection cannot be trusted further. */
export class MalformedResponse extends Error {
  /** Read by the gateway as a connect failure's code (see connectErrorCode in upstreams/http.ts). */
  readonly code = "MALFORMED_HTTP_RESPONSE";
}
