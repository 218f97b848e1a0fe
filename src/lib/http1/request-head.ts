import { FIELD_NAME } from "./field-name.ts";

/** Fields the client writes itself, from the request's URL and body: a caller's own would contradict them. */
const SET_BY_CLIENT = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding"]);
/**
 * What a field value may not hold: CR, LF or NUL would end it early and start another field,
 * or a second request, on the connection; anything but visible ASCII, space and tab would be
 * written as UTF-8, which no API key or header the gateway sends holds.
 */
const UNSAFE_VALUE = /[^\t\x20-\x7e]/;

/** What a request line and its fields are written from. */
export interface RequestHeadParts {
  method: string;
  /** The path and query of the URL. */
  target: string;
  /** The URL's host, with its port when not the scheme's default. */
  host: string;
  headers: Iterable<[string, string]>;
  /** The body's length in bytes; null for a request without one. */
  bodyLength: number | null;
  userAgent: string;
}

/**
 * The text of an HTTP/1.1 request head. A method or field name that is not a token, or a value
 * with a character UNSAFE_VALUE names (a channel key pasted with its line break, say), throws a
 * TypeError as fetch does, rather than splitting the head into fields or requests nobody wrote. The body is asked
 * for unencoded: the gateway reads it as it comes, and a local server gains nothing from
 * compressing it.
 */
export function requestHead(parts: RequestHeadParts): string {
  if (!FIELD_NAME.test(parts.method)) throw new TypeError(`invalid method: ${JSON.stringify(parts.method)}`);
  let head = `${parts.method} ${parts.target} HTTP/1.1\r\nhost: ${parts.host}\r\nconnection: keep-alive\r\naccept-encoding: identity\r\n`;
  let accept = false;
  let userAgent = false;
  for (const [name, rawValue] of parts.headers) {
    const lower = name.toLowerCase();
    if (SET_BY_CLIENT.has(lower)) continue;
    const value = rawValue.trim();
    if (!FIELD_NAME.test(name)) throw new TypeError(`invalid header name: ${JSON.stringify(name)}`);
    if (UNSAFE_VALUE.test(value)) throw new TypeError(`invalid value of header ${name}`);
    if (lower === "accept") accept = true;
    else if (lower === "user-agent") userAgent = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!accept) head += "accept: */*\r\n";
  if (!userAgent) head += `user-agent: ${parts.userAgent}\r\n`;
  if (parts.bodyLength !== null) head += `content-length: ${parts.bodyLength}\r\n`;
  return `${head}\r\n`;
}
