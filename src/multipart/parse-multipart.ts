import { concatBytes } from "../lib/concat-bytes.ts";
import { bodyCutOff, bodyTimedOut, GatewayError } from "../errors/gateway-error.ts";
import { settleWithin, TIMED_OUT } from "../streams/settle-within.ts";
import { DelimiterFinder } from "./find-delimiter.ts";
import { parseBoundary, parsePartHeaders } from "./part-headers.ts";

/** What is known of a file part before its bytes arrive. */
export interface FilePart {
  /** The form field name. */
  name: string;
  filename: string;
  /** The part's Content-Type, `application/octet-stream` when it gave none. */
  contentType: string;
}

/** Receivers of a body's parts, called in body order. */
export interface MultipartHandlers {
  /** A text field, decoded as UTF-8, once its part has ended. */
  onField(name: string, value: string): void;
  /**
   * A file part begins: returns where its bytes go. Each write is awaited (backpressure);
   * the stream is closed at the part's end, or aborted if the body fails.
   */
  onFile(part: FilePart): WritableStream<Uint8Array> | Promise<WritableStream<Uint8Array>>;
}

/** Caps that stop the body being read the moment one is passed. */
export interface MultipartLimits {
  /** Bytes of one file part; more is a 413. */
  maxFileBytes: number;
  /** Bytes of one text field; more is a 413. */
  maxFieldBytes: number;
  /** Bytes of all text fields together, which are held in memory; more is a 413. Default: maxFieldBytes times maxParts. */
  maxFieldsBytes?: number;
  /** Parts of any kind; more is a 413. */
  maxParts: number;
  /** Longest wait for the body's next bytes; longer is a 408 (GATEWAY_BODY_TIMEOUT_MS). Default: no limit. */
  maxQuietMs?: number;
}

const CR = 13;
const LF = 10;
const DASH = 45;
const SPACE = 32;
const TAB = 9;
/** Bytes allowed before the first boundary, in one part's headers, or as padding after a boundary. */
const MAX_PREAMBLE_BYTES = 16 * 1024;
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_PADDING_BYTES = 256;
/** The MB of the 413 message: 2^20 bytes, so a 25 MB cap is 26,214,400 bytes. */
const MEGABYTE = 1024 * 1024;

/**
 * Parses a multipart/form-data body (RFC 7578, RFC 2046) as it streams in: fields are
 * handed over as strings, file bytes written to the sink `onFile` returns. A delimiter split
 * across chunks at any byte is found, in time linear in the body. Malformed or truncated
 * bodies are a 400, a limit passed a 413, a body that pauses past `maxQuietMs` a 408; any way
 * the body is cancelled at once. A body that fails to read is bodyCutOff's 499: the client
 * hung up mid-upload. That is told by the read, not by the request's abort signal: Deno
 * aborts that only once the handler has answered.
 */
export async function parseMultipartStream(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  handlers: MultipartHandlers,
  limits: MultipartLimits,
): Promise<void> {
  const reader = body.getReader();
  let parser: MultipartParser | undefined;
  try {
    parser = new MultipartParser(parseBoundary(contentType), handlers, limits);
    while (!parser.finished) {
      const read = reader.read().catch(() => {
        throw bodyCutOff();
      });
      const result = limits.maxQuietMs === undefined ? await read : await settleWithin(read, limits.maxQuietMs);
      if (result === TIMED_OUT) throw bodyTimedOut(limits.maxQuietMs!);
      const { done, value } = result;
      if (done) throw malformed(parser.started ? "the body ended before its closing boundary" : "no boundary line was found");
      await parser.push(value);
    }
    // RFC 2046 says to ignore the epilogue, so it is not even read.
    await reader.cancel().catch(() => {});
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    await parser?.abort(error);
    throw error;
  }
}

type State = "preamble" | "boundary-line" | "headers" | "body" | "finished";
type BoundaryLine = "start" | "dash" | "padding" | "cr";
type OpenPart =
  | { kind: "field"; name: string; size: number; chunks: Uint8Array[] }
  | { kind: "file"; name: string; size: number; writer: WritableStreamDefaultWriter<Uint8Array> };

/** The byte-level state machine behind parseMultipartStream; each byte is looked at a bounded number of times. */
class MultipartParser {
  private state: State = "preamble";
  private readonly finder: DelimiterFinder;
  private boundaryLine: BoundaryLine = "start";
  /** Bytes counted against the preamble, padding or header cap of the current state. */
  private counted = 0;
  private headerChunks: Uint8Array[] = [];
  /** Bytes of the header line being read, before its LF, and whether the first is a CR. */
  private lineLength = 0;
  private lineStartsWithCR = false;
  private part: OpenPart | null = null;
  private parts = 0;
  private fieldBytes = 0;

  constructor(
    boundary: string,
    private readonly handlers: MultipartHandlers,
    private readonly limits: MultipartLimits,
  ) {
    // The body's start counts as the CRLF before the first boundary (RFC 2046 section 5.1.1).
    this.finder = new DelimiterFinder(new TextEncoder().encode(`\r\n--${boundary}`), 2);
  }

  get finished(): boolean {
    return this.state === "finished";
  }

  /** Whether the first boundary has been seen. */
  get started(): boolean {
    return this.state !== "preamble";
  }

  /** Consumes one chunk of the body. */
  async push(chunk: Uint8Array): Promise<void> {
    let pos = 0;
    while (pos < chunk.length && this.state !== "finished") {
      if (this.state === "preamble" || this.state === "body") pos = await this.scanBody(chunk, pos);
      else if (this.state === "boundary-line") pos = this.readBoundaryLine(chunk, pos);
      else pos = await this.readHeaders(chunk, pos);
    }
  }

  /** Releases the open file sink, if any, after a failure. */
  async abort(reason: unknown): Promise<void> {
    if (this.part?.kind === "file") await this.part.writer.abort(reason).catch(() => {});
    this.part = null;
  }

  /** Passes body bytes on until the next delimiter; the preamble's are dropped, up to a cap. */
  private async scanBody(chunk: Uint8Array, start: number): Promise<number> {
    const { data, next, found } = this.finder.scan(chunk, start);
    for (const bytes of data) await this.emit(bytes);
    if (!found) {
      if (this.state === "preamble") this.count(next - start, MAX_PREAMBLE_BYTES, "no opening boundary");
      return next;
    }
    await this.endPart();
    this.state = "boundary-line";
    this.boundaryLine = "start";
    this.counted = 0;
    return next;
  }

  /** After a delimiter: `--` ends the body, otherwise optional padding and CRLF open a part. */
  private readBoundaryLine(chunk: Uint8Array, pos: number): number {
    while (pos < chunk.length) {
      const byte = chunk[pos++];
      if (this.boundaryLine === "start" && byte === DASH) {
        this.boundaryLine = "dash";
      } else if (this.boundaryLine === "dash") {
        if (byte !== DASH) throw malformed("a boundary is followed by a single dash");
        this.state = "finished";
        return pos;
      } else if (this.boundaryLine === "cr") {
        if (byte !== LF) throw malformed("a boundary line does not end in CRLF");
        this.state = "headers";
        this.counted = 0;
        return pos;
      } else if (byte === CR) {
        this.boundaryLine = "cr";
      } else if (byte === SPACE || byte === TAB) {
        this.boundaryLine = "padding";
        this.count(1, MAX_PADDING_BYTES, "a boundary line is too long");
      } else {
        throw malformed("a boundary is followed by other text");
      }
    }
    return pos;
  }

  /** Collects header lines up to the blank line, then opens the part they describe. */
  private async readHeaders(chunk: Uint8Array, pos: number): Promise<number> {
    while (pos < chunk.length) {
      const lf = chunk.indexOf(LF, pos);
      const end = lf === -1 ? chunk.length : lf + 1;
      this.count(end - pos, MAX_HEADER_BYTES, "a part's headers are too long");
      this.headerChunks.push(chunk.slice(pos, end));
      const lineBytes = (lf === -1 ? end : lf) - pos;
      if (this.lineLength === 0 && lineBytes > 0) this.lineStartsWithCR = chunk[pos] === CR;
      this.lineLength += lineBytes;
      pos = end;
      if (lf === -1) break;
      // RFC 2046 lines end in CRLF; a bare LF is accepted too, as most parsers do.
      const blank = this.lineLength === 0 || (this.lineLength === 1 && this.lineStartsWithCR);
      this.lineLength = 0;
      if (blank) {
        await this.openPart();
        break;
      }
    }
    return pos;
  }

  private async openPart(): Promise<void> {
    const headers = parsePartHeaders(new TextDecoder().decode(concatBytes(this.headerChunks)));
    this.headerChunks = [];
    if (++this.parts > this.limits.maxParts) {
      throw new GatewayError(413, `The form has more than ${this.limits.maxParts} parts`);
    }
    if (headers.filename === undefined) {
      this.part = { kind: "field", name: headers.name, size: 0, chunks: [] };
    } else {
      const contentType = headers.contentType ?? "application/octet-stream";
      const sink = await this.handlers.onFile({ name: headers.name, filename: headers.filename, contentType });
      this.part = { kind: "file", name: headers.name, size: 0, writer: sink.getWriter() };
    }
    this.state = "body";
  }

  /** Passes part bytes on, refusing any that would take the part past its limit. */
  private async emit(bytes: Uint8Array): Promise<void> {
    const part = this.part;
    if (part === null || bytes.length === 0) return; // the preamble is dropped
    part.size += bytes.length;
    if (part.kind === "file") {
      if (part.size > this.limits.maxFileBytes) throw fileTooLarge(this.limits.maxFileBytes);
      await part.writer.write(bytes);
    } else {
      if (part.size > this.limits.maxFieldBytes) {
        throw new GatewayError(413, `Field "${part.name}" is larger than the limit of ${this.limits.maxFieldBytes} bytes`);
      }
      this.fieldBytes += bytes.length;
      const maxFieldsBytes = this.limits.maxFieldsBytes ?? this.limits.maxFieldBytes * this.limits.maxParts;
      if (this.fieldBytes > maxFieldsBytes) throw new GatewayError(413, `The form's text fields are larger than the limit of ${maxFieldsBytes} bytes together`);
      part.chunks.push(bytes.slice()); // a copy, so a small field does not pin a large network chunk
    }
  }

  private async endPart(): Promise<void> {
    const part = this.part;
    this.part = null;
    if (part?.kind === "field") this.handlers.onField(part.name, new TextDecoder().decode(concatBytes(part.chunks)));
    else if (part?.kind === "file") await part.writer.close();
  }

  private count(bytes: number, limit: number, problem: string): void {
    this.counted += bytes;
    if (this.counted > limit) throw malformed(problem);
  }
}

function malformed(problem: string): GatewayError {
  return new GatewayError(400, `Malformed multipart/form-data body: ${problem}`);
}

function fileTooLarge(maxBytes: number): GatewayError {
  const megabytes = Number((maxBytes / MEGABYTE).toPrecision(3));
  return new GatewayError(413, `The file is larger than the limit of ${megabytes} MB (${maxBytes} bytes)`);
}
