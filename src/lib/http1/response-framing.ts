import { MalformedResponse } from "./malformed-response.ts";

/** How a response's body is delimited (RFC 9112 section 6.3), and whether its connection can carry another request after it. */
export type Framing = ({ kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" } | { kind: "close" }) & { reusable: boolean };

const DIGITS = /^\d{1,15}$/;

/**
 * The framing of a final response, from its status line, status and fields. A body-less
 * status (204, 304) or a response to HEAD has none; Transfer-Encoding wins over
 * Content-Length (and the connection is then not reused, as one that carried both may have
 * been smuggled); Content-Length values must agree; with neither the body runs to the close.
 * Only an HTTP/1.1 response without `Connection: close` leaves its connection reusable.
 */
export function framingOf(statusLine: string, status: number, headers: [string, string][], headRequest: boolean): Framing {
  let transferEncoding: string | null = null;
  let contentLength: string | null = null;
  let close = !statusLine.startsWith("HTTP/1.1");
  for (const [name, value] of headers) {
    if (name === "transfer-encoding") transferEncoding = transferEncoding === null ? value : `${transferEncoding},${value}`;
    else if (name === "content-length") contentLength = contentLength === null ? value : `${contentLength},${value}`;
    else if (name === "connection" && value.toLowerCase().split(",").some((token) => token.trim() === "close")) close = true;
  }
  if (headRequest || status === 204 || status === 304) return { kind: "none", reusable: !close };
  if (transferEncoding !== null) {
    const codings = transferEncoding.toLowerCase().split(",").map((coding) => coding.trim());
    if (codings.at(-1) === "chunked") return { kind: "chunked", reusable: !close && contentLength === null };
    return { kind: "close", reusable: false };
  }
  if (contentLength !== null) return { kind: "length", length: lengthOf(contentLength), reusable: !close };
  return { kind: "close", reusable: false };
}

/** One Content-Length from a field that may repeat it ("42, 42"); differing or non-numeric values are malformed. */
function lengthOf(value: string): number {
  const values = new Set(value.split(",").map((part) => part.trim()));
  const [only] = values;
  if (values.size !== 1 || !DIGITS.test(only!)) throw new MalformedResponse("the upstream's Content-Length is not one number");
  return Number(only);
}
