import type { StreamPart } from "../../canonical/chat.ts";
import { formatSseEvent } from "../../streams/sse.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import type { StreamWire } from "../../streams/render-batches.ts";

/**
 * How a Gemini caller's stream is written. `?alt=sse`, which the genai SDKs send, asks for
 * Server-Sent Events; without it Gemini answers one JSON array, each chunk an element written
 * as it comes, which REST clients parse as it grows. Neither takes an SSE comment as a
 * keep-alive, so each framing writes its own, as JSON white space. One framing serves one
 * stream: what a keep-alive began, the next chunk ends.
 */
export interface GeminiFraming {
  /** One chunk (its JSON text) as written. */
  chunk(json: string): string;
  /** What follows the last chunk, an error's included, when anything does. */
  end?(): string;
  /** The body's content type when it is not SSE's, and its keep-alive. */
  wire: StreamWire;
}

const DATA_FIELD = "data: ";

/**
 * Each chunk a `data:` event. Google's legacy SDK (@google/generative-ai) reads nothing but
 * `data:` lines: an SSE comment stops its parse, and the stream fails at its end. So a
 * keep-alive begins the next event's data line early, and later ones pad it with spaces, white
 * space before the chunk's JSON that every parser of the value skips.
 */
function sseFraming(): GeminiFraming {
  let dataLineOpen = false;
  return {
    chunk(json) {
      const event = formatSseEvent(json);
      const written = dataLineOpen ? event.slice(DATA_FIELD.length) : event;
      dataLineOpen = false;
      return written;
    },
    wire: {
      keepAlive() {
        const written = dataLineOpen ? " " : DATA_FIELD;
        dataLineOpen = true;
        return written;
      },
    },
  };
}

/** JSON allows white space between the elements, and before the array. */
const JSON_ARRAY_WIRE: StreamWire = { contentType: "application/json; charset=utf-8", keepAlive: () => "\n" };

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

/** The framing of a new stream as its request's `alt` asks: SSE for "sse", else (Gemini's default) a JSON array. */
export function geminiFramingOf(alt: string | undefined): GeminiFraming {
  return alt === "sse" ? sseFraming() : jsonArrayFraming();
}

/** `render` followed by the framing's end, after its last chunk or its error. */
export function framed(framing: GeminiFraming, render: StreamStep<StreamPart, string>): StreamStep<StreamPart, string> {
  const end = framing.end;
  if (!end) return render;
  return {
    transform: (part, output) => render.transform(part, output),
    flush(output) {
      render.flush?.(output);
      output.enqueue(end());
    },
  };
}
