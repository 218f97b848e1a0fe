import { findHeadEnd, GrowableBytes } from "./head-bytes.ts";
import { framingOf, type Framing } from "./response-framing.ts";
import { MalformedResponse } from "./malformed-response.ts";
import { FIELD_NAME } from "./field-name.ts";

/** A response's status line and header fields, as the connection carried them. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** Header fields in the order received, names lowercased. */
  headers: [string, string][];
}

/** Where a parsed response goes: its head once, its body bytes as they come, then its end. */
export interface ResponseSink {
  head(head: ResponseHead): void;
  body(bytes: Uint8Array): void;
  end(): void;
}

/** Most bytes a response head (status line and fields) may take; a server that sends more is not an API. */
const MAX_HEAD_BYTES = 64 * 1024;
/** Most bytes of one line of a chunked body (a chunk size with its extensions, a trailer field), and of all trailer fields together. */
const MAX_LINE_BYTES = 8 * 1024;
const MAX_TRAILER_BYTES = 64 * 1024;
/** Most hex digits of a chunk size: 13 stay within Number.MAX_SAFE_INTEGER. */
const CHUNK_SIZE = /^([0-9a-fA-F]{1,13})[ \t]*(?:;.*)?$/;
const STATUS_LINE = /^HTTP\/1\.[01] ([1-9]\d\d)(?: (.*))?$/;
const LATIN1 = new TextDecoder("latin1");
/** What a field value may not hold that a head split at its line feeds can still carry. */
const FORBIDDEN_IN_VALUE = /[\0\r]/;
const LF = 10;

type State = "head" | "length" | "close" | "chunk-size" | "chunk-data" | "chunk-end" | "trailers" | "done";

/**
 * Parses the response to one request on an HTTP/1.1 connection from its bytes as they arrive
 * (RFC 9112): the head, then a body framed by Content-Length, chunked transfer coding or the
 * connection's close, each byte looked at once. Interim 1xx heads are passed over. Body bytes
 * go to the sink as views of the bytes pushed, never copied. A server that breaks the framing
 * throws MalformedResponse from `push`.
 */
export class ResponseParser {
  #state: State = "head";
  #framing: Framing | null = null;
  /** Body bytes still to come: of the Content-Length body, or of the current chunk. */
  #remaining = 0;
  /** A head or line split across pushes, kept until its end arrives. */
  readonly #partial = new GrowableBytes();
  /** Bytes came after the response ended: the server is out of step with this connection. */
  #extra = false;
  /** Bytes of trailer fields read so far. */
  #trailerBytes = 0;
  /** A byte has come: an interim head, once read, leaves nothing else that says so. */
  #started = false;

  constructor(
    private readonly sink: ResponseSink,
    /** A response to HEAD has no body whatever its fields say. */
    private readonly headRequest = false,
  ) {}

  /** Whether the response has ended. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Whether the connection can carry another request: the response ended in its own framing and nothing came after it. */
  get reusable(): boolean {
    return this.#state === "done" && this.#framing !== null && this.#framing.reusable && !this.#extra;
  }

  /** Whether any byte of a final or interim head has arrived. */
  get started(): boolean {
    return this.#started;
  }

  /** Takes the next bytes the connection delivered. */
  push(bytes: Uint8Array): void {
    if (bytes.length > 0) this.#started = true;
    let at = 0;
    while (at < bytes.length) {
      switch (this.#state) {
        case "head":
          at = this.#readHead(bytes, at);
          break;
        case "length":
        case "chunk-data":
          at = this.#readCounted(bytes, at);
          break;
        case "close":
          this.sink.body(at === 0 ? bytes : bytes.subarray(at));
          at = bytes.length;
          break;
        case "chunk-size":
        case "chunk-end":
        case "trailers":
          at = this.#readLine(bytes, at);
          break;
        case "done":
          this.#extra = true;
          return;
      }
    }
  }

  /** The connection was closed by the server: ends a body that runs to the close; else throws if the response is cut short. */
  finish(): void {
    if (this.#state === "done") return;
    if (this.#state === "close") return this.#end();
    throw new MalformedResponse(this.started ? "the upstream closed the connection in the middle of its response" : "the upstream closed the connection without answering");
  }

  #readHead(bytes: Uint8Array, at: number): number {
    const partial = this.#partial;
    if (partial.length === 0) {
      const end = findHeadEnd(bytes, at);
      if (end >= 0) {
        this.#takeHead(bytes.subarray(at, end));
        return end;
      }
    }
    // The head spans pushes: gather it, searching only the bytes not searched before.
    const searchedBefore = Math.max(0, partial.length - 2);
    partial.append(at === 0 ? bytes : bytes.subarray(at));
    const end = findHeadEnd(partial.view(), searchedBefore);
    if (end < 0) {
      if (partial.length > MAX_HEAD_BYTES) throw new MalformedResponse(`the upstream's response head is over ${MAX_HEAD_BYTES} bytes`);
      return bytes.length;
    }
    const head = partial.view().slice(0, end);
    // What followed the head in this push is body: find where it starts within `bytes`.
    const consumed = bytes.length - (partial.length - end);
    partial.clear();
    this.#takeHead(head);
    return consumed;
  }

  #takeHead(bytes: Uint8Array): void {
    if (bytes.length > MAX_HEAD_BYTES) throw new MalformedResponse(`the upstream's response head is over ${MAX_HEAD_BYTES} bytes`);
    const lines = LATIN1.decode(bytes).split(/\r?\n/);
    const statusLine = STATUS_LINE.exec(lines[0]!);
    if (!statusLine) throw new MalformedResponse("the upstream's answer does not start with an HTTP/1.1 status line");
    const status = Number(statusLine[1]);
    const headers = fieldsOf(lines);
    if (status === 101) throw new MalformedResponse("the upstream switched protocols, which the request did not ask for");
    // An interim answer (100 Continue, 103 Early Hints): the final one follows on the same connection.
    if (status < 200) return;
    if (status > 599) throw new MalformedResponse(`the upstream answered status ${status}, outside HTTP's range`);
    const framing = framingOf(lines[0]!, status, headers, this.headRequest);
    this.#framing = framing;
    this.sink.head({ status, statusText: statusLine[2] ?? "", headers });
    this.#startBody(framing);
  }

  #startBody(framing: Framing): void {
    if (framing.kind === "none" || (framing.kind === "length" && framing.length === 0)) return this.#end();
    if (framing.kind === "length") {
      this.#state = "length";
      this.#remaining = framing.length;
    } else this.#state = framing.kind === "chunked" ? "chunk-size" : "close";
  }

  #readCounted(bytes: Uint8Array, at: number): number {
    const take = Math.min(this.#remaining, bytes.length - at);
    this.sink.body(at === 0 && take === bytes.length ? bytes : bytes.subarray(at, at + take));
    this.#remaining -= take;
    if (this.#remaining === 0) {
      if (this.#state === "length") this.#end();
      else this.#state = "chunk-end";
    }
    return at + take;
  }

  /** Gathers one line (chunk size, a chunk's closing CRLF, a trailer field) and acts on it once its LF has come. */
  #readLine(bytes: Uint8Array, at: number): number {
    const lf = bytes.indexOf(LF, at);
    const end = lf < 0 ? bytes.length : lf + 1;
    this.#partial.append(bytes.subarray(at, end));
    if (this.#state === "trailers") this.#trailerBytes += end - at;
    if (this.#partial.length > MAX_LINE_BYTES || this.#trailerBytes > MAX_TRAILER_BYTES) throw new MalformedResponse("the upstream's chunked body has a line too long to be one");
    if (lf < 0) return end;
    const line = LATIN1.decode(this.#partial.view()).replace(/\r?\n$/, "");
    this.#partial.clear();
    this.#takeLine(line);
    return end;
  }

  #takeLine(line: string): void {
    if (this.#state === "chunk-end") {
      if (line !== "") throw new MalformedResponse("a chunk of the upstream's body runs past its size");
      this.#state = "chunk-size";
      return;
    }
    if (this.#state === "trailers") {
      // Trailer fields are read past: nothing the gateway relays comes in them.
      if (line === "") this.#end();
      return;
    }
    const size = CHUNK_SIZE.exec(line);
    if (!size) throw new MalformedResponse("the upstream's chunked body has a chunk size that is not hexadecimal");
    this.#remaining = Number.parseInt(size[1]!, 16);
    this.#state = this.#remaining === 0 ? "trailers" : "chunk-data";
  }

  #end(): void {
    this.#state = "done";
    this.sink.end();
  }
}

/** The header fields of a head's lines (the status line first), names lowercased; a folded or nameless line, or a value with a NUL or a bare CR, is malformed. */
function fieldsOf(lines: string[]): [string, string][] {
  const fields: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!FIELD_NAME.test(name)) throw new MalformedResponse("the upstream's response head has a line that is not a header field");
    const value = line.slice(colon + 1).trim();
    // RFC 9110 5.5: no field value holds them; Headers refuses them, and a Response that cannot be made would leave its request unanswered.
    if (FORBIDDEN_IN_VALUE.test(value)) throw new MalformedResponse("the upstream's response head has a field value with a NUL or a bare CR");
    fields.push([name.toLowerCase(), value]);
  }
  return fields;
}
