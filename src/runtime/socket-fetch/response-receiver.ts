import type { ResponseHead, ResponseSink } from "../../lib/http1/parse-response.ts";
import { concatBytes } from "../../lib/concat-bytes.ts";
import { MalformedResponse } from "../../lib/http1/malformed-response.ts";

/** Statuses whose Response may not have a body (Fetch standard's "null body status"). */
const NULL_BODY_STATUS = new Set([204, 205, 304]);

/** Body bytes buffered for a reader that has not read them, before the socket stops reading. */
const BODY_HIGH_WATER_BYTES = 64 * 1024;

/** What the receiver asks of its connection: flow control of the body, and letting go of it. */
export interface BodySource {
  pause(): void;
  resume(): void;
  /** The reader cancelled the body: the rest will not be read, so the connection cannot carry another request. */
  abandon(): void;
}

/**
 * Turns one parsed response into a fetch Response. Resolution waits for the end of the push
 * that brought the head, so an answer whose body came with its head (most JSON answers) is a
 * Response over those bytes; otherwise the body is a stream that holds at most
 * BODY_HIGH_WATER_BYTES unread before the socket is paused, and is resumed as it is read.
 */
export class ResponseReceiver implements ResponseSink {
  readonly response: Promise<Response>;
  #resolve!: (response: Response) => void;
  #reject!: (error: unknown) => void;
  #head: ResponseHead | null = null;
  /** Body bytes that came before the Response was made. */
  #early: Uint8Array[] = [];
  #stream: ReadableStreamDefaultController<Uint8Array> | null = null;
  #answered = false;
  #ended = false;
  #failed = false;

  constructor(private readonly source: BodySource) {
    this.response = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  head(head: ResponseHead): void {
    this.#head = head;
  }

  body(bytes: Uint8Array): void {
    const stream = this.#stream;
    if (!stream) {
      // Bytes of a body the Response may not have (a 205 that sent some) are dropped, not kept.
      if (!this.#answered) this.#early.push(bytes);
      return;
    }
    stream.enqueue(bytes);
    if ((stream.desiredSize ?? 1) <= 0) this.source.pause();
  }

  end(): void {
    this.#ended = true;
    this.#stream?.close();
  }

  /** Called once the connection's push is parsed: answers as soon as the head is in. */
  afterPush(): void {
    if (this.#answered || this.#failed || !this.#head) return;
    let response: Response;
    try {
      response = this.#responseOf(this.#head);
    } catch (error) {
      // A field value or reason phrase fetch would not take (a bare CR, a control character), or a coding it cannot read.
      this.fail(error instanceof MalformedResponse ? error : new MalformedResponse(`the upstream's response head cannot be read: ${String(error)}`));
      this.source.abandon();
      return;
    }
    this.#answered = true;
    this.#resolve(response);
  }

  #responseOf({ status, statusText, headers }: ResponseHead): Response {
    const coding = headers.find(([name]) => name === "content-encoding")?.[1].toLowerCase();
    const decoding = coding === undefined || coding === "identity" ? null : DECODINGS[coding];
    if (decoding === undefined) throw new MalformedResponse(`the upstream sent its answer with content-encoding ${coding}, which the gateway cannot read`);
    const body = this.#bodyOf(status);
    // The request asked for the body unencoded (request-head.ts); a server that encodes it all the same is read as fetch reads it.
    return new Response(body === null || decoding === null ? body : asStream(body).pipeThrough(new DecompressionStream(decoding)), { status, statusText, headers });
  }

  /** Ends the exchange with `error`: the Response's promise rejects, or its body errors unless it already ended. */
  fail(error: unknown): void {
    if (this.#failed || (this.#answered && this.#ended)) return;
    this.#failed = true;
    if (!this.#answered) this.#reject(error);
    else this.#stream?.error(error);
  }

  #bodyOf(status: number): Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null {
    const early = this.#early;
    this.#early = [];
    if (NULL_BODY_STATUS.has(status)) return null;
    if (this.#ended) return concatBytes(early) as Uint8Array<ArrayBuffer>;
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#stream = controller;
          for (const bytes of early) controller.enqueue(bytes);
        },
        pull: () => this.source.resume(),
        cancel: () => {
          if (!this.#ended) this.source.abandon();
        },
      },
      { highWaterMark: BODY_HIGH_WATER_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
    );
  }
}

/** The content codings read, and the DecompressionStream format of each (fetch's own set). */
const DECODINGS: Record<string, CompressionFormat | undefined> = {
  gzip: "gzip",
  "x-gzip": "gzip",
  deflate: "deflate",
  br: "brotli" as CompressionFormat,
  zstd: "zstd" as CompressionFormat,
};

/** The body as a stream of what DecompressionStream takes: the socket's bytes, each over an ArrayBuffer of its own. */
function asStream(body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>): ReadableStream<Uint8Array<ArrayBuffer>> {
  return body instanceof ReadableStream ? (body as ReadableStream<Uint8Array<ArrayBuffer>>) : new Response(body).body!;
}
