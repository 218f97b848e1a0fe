import { errorBody } from "../errors/gateway-error.ts";
import { readThroughStep, type BatchSource } from "./batch-source.ts";
import { chainSteps, type StepOutput, type StreamStep } from "./stream-step.ts";

/** One Server-Sent Event: its `event` name (default "message"), data lines joined by "\n". */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Parses text into SSE events per the WHATWG rules: LF, CR and CRLF line ends (a CRLF
 * split across chunks included), comments, multi-line data, events split anywhere across
 * chunks. Linear in the input: an unfinished line is kept as pieces and joined once.
 */
export function sseParserStep(): StreamStep<string, SseEvent> {
  let partialLine: string[] = [];
  let skipLineFeed = false;
  let dataLines: string[] = [];
  let eventName = "";
  let lastId: string | undefined;

  const dispatch = (controller: StepOutput<SseEvent>) => {
    if (dataLines.length > 0) {
      controller.enqueue({ event: eventName || "message", data: dataLines.join("\n"), id: lastId });
    }
    dataLines = [];
    eventName = "";
  };

  const processLine = (line: string, controller: StepOutput<SseEvent>) => {
    if (line === "") return dispatch(controller);
    if (line.charCodeAt(0) === 58 /* ":" comment */) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") dataLines.push(value);
    else if (field === "event") eventName = value;
    else if (field === "id" && !value.includes("\0")) lastId = value;
  };

  return {
    transform(chunk, controller) {
      // An empty chunk must not clear a pending CR: the LF of a CRLF may still follow.
      if (chunk.length === 0) return;
      let start = 0;
      if (skipLineFeed && chunk.charCodeAt(0) === 10) start = 1;
      skipLineFeed = false;
      for (let i = start; i < chunk.length; i++) {
        const code = chunk.charCodeAt(i);
        if (code !== 10 && code !== 13) continue;
        partialLine.push(chunk.slice(start, i));
        processLine(partialLine.length === 1 ? partialLine[0]! : partialLine.join(""), controller);
        partialLine = [];
        if (code === 13) {
          if (i + 1 < chunk.length) {
            if (chunk.charCodeAt(i + 1) === 10) i++;
          } else {
            skipLineFeed = true;
          }
        }
        start = i + 1;
      }
      if (start < chunk.length) partialLine.push(chunk.slice(start));
    },
    flush(controller) {
      // A stream that ends without a final blank line still delivers its last event.
      if (partialLine.length > 0) processLine(partialLine.join(""), controller);
      dispatch(controller);
    },
  };
}

/** An upstream's event stream: its body parsed as SSE and decoded by `decode`, a batch per delivery. */
export function readSseBody<T>(body: ReadableStream<Uint8Array>, decode: StreamStep<SseEvent, T>, aborted: AbortSignal): BatchSource<T> {
  return readThroughStep(body, chainSteps(sseParserStep(), decode), aborted);
}

/** The spec's error body as one SSE event: how a stream that already began reports a failure. */
export function formatErrorEvent(message: string): string {
  return formatSseEvent(JSON.stringify(errorBody(502, message)));
}

/** Serialises one event: `event:` when named, then `data:` lines, then a blank line. */
export function formatSseEvent(data: string, event?: string): string {
  const head = event ? `event: ${event}\n` : "";
  return data.includes("\n") ? `${head}data: ${data.split("\n").join("\ndata: ")}\n\n` : `${head}data: ${data}\n\n`;
}
