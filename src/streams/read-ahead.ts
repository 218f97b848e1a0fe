/** What a read of a byte stream gives: a delivery, or the end. */
type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;

/** The part of a stream reader the gateway uses to read an upstream body. */
export interface BodyReader {
  read(): Promise<ReadResult>;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * A reader of `body` that keeps a read pending whenever fewer than `limitBytes` wait unread,
 * so bytes an upstream sent survive its connection breaking. A reset errors Bun's fetch body,
 * and erroring a stream discards whatever sat in it unread: an upstream that sends its last
 * events and then resets lost them whenever the gateway was not reading at that moment (a
 * caller reading slowly, the response head still being written), and a complete answer was
 * billed as a failure. Read ahead, the bytes are the gateway's as they arrive; the limit keeps
 * a slow caller from buffering a fast upstream without end.
 */
export function readAhead(body: ReadableStream<Uint8Array>, limitBytes: number): BodyReader {
  const reader = body.getReader();
  // Reads in the order issued; each settles with a delivery, the end, or the failure.
  const ahead: Promise<ReadResult>[] = [];
  let bytesAhead = 0;
  let reading = false;
  let finished = false;
  const readMore = (): void => {
    if (reading || finished || bytesAhead >= limitBytes) return;
    reading = true;
    const next = reader.read();
    ahead.push(next);
    next.then(
      (result) => {
        reading = false;
        if (result.done) finished = true;
        else {
          bytesAhead += result.value.byteLength;
          readMore();
        }
      },
      () => {
        reading = false;
        finished = true;
      },
    );
  };
  readMore();
  return {
    async read() {
      readMore();
      // Past the end or a failure, the reader answers for itself (done, or the error again).
      const result = await (ahead.shift() ?? reader.read());
      if (!result.done) {
        bytesAhead -= result.value.byteLength;
        readMore();
      }
      return result;
    },
    cancel(reason) {
      finished = true;
      return reader.cancel(reason);
    },
  };
}
