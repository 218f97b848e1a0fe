import type { StreamPart } from "../../canonical/chat.ts";
import { formatSseEvent } from "../../streams/sse.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import type { StreamWire } from "../../streams/render-batches.ts";

/**
 * How a Gemini caller's stream is written. `?alt=sse`, which the genai SDKs send, asks for
 * Server-Sent Events; without it Gemini answers one JSON array, each chunk an element written
 * as it comes, which REST clients parse as it grows.
 */
export interface GeminiFraming {
  /** One chunk (its JSON text) as written. */
  chunk(json: string): string;
  /** What follows the last chunk, an error's included. */
  end(): string;
  /** The body's content type and keep-alive when they are not SSE's. */
  wire?: StreamWire;
}

/** Each chunk a `data:` event. */
export const SSE_FRAMING: GeminiFraming = { chunk: (json) => formatSseEvent(json), end: () => "" };

/** JSON allows white space between the elements, and before the array. */
const JSON_ARRAY_WIRE: StreamWire = { contentType: "application/json; charset=utf-8", keepAlive: "\n" };

/** One JSON array for one stream, its elements separated as Gemini separates them. */
function jsonArrayFraming(): GeminiFraming {
  let begun = false;
  return {
    chunk(json) {
      const before = begun ? ",\r\n" : "[";
      begun = true;
      return before + json;
    },
    end: () => (begun ? "]" : "[]"),
    wire: JSON_ARRAY_WIRE,
  };
}

/** The framing a request's `alt` asks for: SSE for "sse", else (Gemini's default) a new JSON array. */
export function geminiFramingOf(alt: string | undefined): GeminiFraming {
  return alt === "sse" ? SSE_FRAMING : jsonArrayFraming();
}

/** `render` followed by the framing's end, after its last chunk or its error. */
export function framed(framing: GeminiFraming, render: StreamStep<StreamPart, string>): StreamStep<StreamPart, string> {
  if (framing === SSE_FRAMING) return render;
  return {
    transform: (part, output) => render.transform(part, output),
    flush(output) {
      render.flush?.(output);
      output.enqueue(framing.end());
    },
  };
}
