import { pastBodyLimit } from "../upstreams/upstream-error.ts";
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
 *
 * What it holds is bounded: once the unfinished line and the data lines of the event being
 * assembled pass `maxEventLength` characters, it throws a protocol UpstreamError, so an
 * upstream that never ends a line, or sends one event of endless data lines, cannot grow
 * the heap. Characters of the decoded text are counted (two running sums, nothing re-joined):
 * never more than the bytes they came as, so the error never names a limit that was not passed.
 */
export function sseParserStep(maxEventLength: number): StreamStep<string, SseEvent> {
  let partialLine: string[] = [];
  let partialLength = 0;
  let skipLineFeed = false;
  let dataLines: string[] = [];
  let dataLength = 0;
  let eventName = "";
  let lastId: string | undefined;

  const checkHeld = () => {
    if (partialLength + dataLength > maxEventLength) throw pastBodyLimit("the upstream sent an event larger than", maxEventLength);
  };

  const dispatch = (controller: StepOutput<SseEvent>) => {
    if (dataLines.length > 0) {
      controller.enqueue({ event: eventName || "message", data: dataLines.join("\n"), id: lastId });
    }
    dataLines = [];
    dataLength = 0;
    eventName = "";
  };

  /** The unfinished line completed by `end`; it no longer counts as unfinished. */
  const endLine = (end: string) => {
    if (partialLine.length === 0) return end;
    partialLine.push(end);
    const line = partialLine.join("");
    partialLine = [];
    partialLength = 0;
    return line;
  };

  const processLine = (line: string, controller: StepOutput<SseEvent>) => {
    if (line === "") return dispatch(controller);
    if (line.charCodeAt(0) === 58 /* ":" comment */) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") {
      dataLines.push(value);
      dataLength += value.length;
      checkHeld();
    } else if (field === "event") eventName = value;
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
        processLine(endLine(chunk.slice(start, i)), controller);
        if (code === 13) {
          if (i + 1 < chunk.length) {
            if (chunk.charCodeAt(i + 1) === 10) i++;
          } else {
            skipLineFeed = true;
          }
        }
        start = i + 1;
      }
      if (start < chunk.length) {
        partialLine.push(chunk.slice(start));
        partialLength += chunk.length - start;
        checkHeld();
      }
    },
    flush(controller) {
      // A stream that ends without a final blank line still delivers its last event.
      if (partialLine.length > 0) processLine(endLine(""), controller);
      dispatch(controller);
    },
  };
}

/**
 * An upstream's event stream: its body parsed as SSE (no event larger than `maxEventLength`)
 * and decoded by `decode`, a batch per delivery.
 */
export function readSseBody<T>(body: ReadableStream<Uint8Array>, decode: StreamStep<SseEvent, T>, aborted: AbortSignal, maxEventLength: number): BatchSource<T> {
  return readThroughStep(body, chainSteps(sseParserStep(maxEventLength), decode), aborted);
}

/** Serialises one event: `event:` when named, then `data:` lines, then a blank line. */
export function formatSseEvent(data: string, event?: string): string {
  const head = event ? `event: ${event}\n` : "";
  return data.includes("\n") ? `${head}data: ${data.split("\n").join("\ndata: ")}\n\n` : `${head}data: ${data}\n\n`;
}
