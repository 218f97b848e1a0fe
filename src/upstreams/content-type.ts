import { UpstreamError } from "./upstream-error.ts";

/**
 * The first value of an upstream's Content-Type header, as sent; null when there is none. A
 * header sent twice reaches fetch's Headers joined with ", " ("audio/mpeg, audio/wav"), which
 * is no media type; a comma inside a quoted parameter value is not a separator.
 */
export function firstContentType(header: string | null): string | null {
  if (header === null) return null;
  let quoted = false;
  let end = header.length;
  for (let i = 0; i < header.length; i++) {
    const char = header[i];
    if (quoted && char === "\\") i++;
    else if (char === '"') quoted = !quoted;
    else if (char === "," && !quoted) {
      end = i;
      break;
    }
  }
  return header.slice(0, end).trim() || null;
}

/** The media type of a Content-Type value, lower-cased and without parameters: "Audio/MPEG; x=1" is "audio/mpeg". */
export function mediaTypeOf(contentType: string): string {
  const end = contentType.indexOf(";");
  return (end < 0 ? contentType : contentType.slice(0, end)).trim().toLowerCase();
}

/** Drops a 2xx body of the wrong kind; the protocol error names what came instead of `expected`. */
export function wrongKindOfBody(response: Response, mediaType: string, expected: string): UpstreamError {
  response.body?.cancel().catch(() => {});
  return new UpstreamError("protocol", `upstream answered ${mediaType} instead of ${expected}`);
}

/**
 * The body of a 2xx answer to a streamed request, or a protocol failure before any byte reaches
 * the caller when there is none or it is labelled JSON or HTML (an upstream that ignored
 * `stream`, an error page). Any other label, or none, is read as SSE, since some
 * OpenAI-compatible servers label their streams badly.
 */
export function eventStreamBody(response: Response): ReadableStream<Uint8Array> {
  if (!response.body) throw new UpstreamError("protocol", "upstream sent no stream body");
  const contentType = response.headers.get("content-type");
  if (contentType !== null) {
    const mediaType = mediaTypeOf(contentType);
    if (mediaType === "application/json" || mediaType === "text/html") throw wrongKindOfBody(response, mediaType, "an event stream");
  }
  return response.body;
}
