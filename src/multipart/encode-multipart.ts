import { randomBase62 } from "../lib/random-id.ts";

/** The one file of an encoded form. `size` must be exact: it goes into Content-Length. */
export interface MultipartFile {
  /** The form field name, e.g. `file`. */
  field: string;
  filename: string;
  contentType: string;
  size: number;
  /** A fresh stream of the file's bytes; called once, on the body's first read. */
  open(): ReadableStream<Uint8Array>;
}

/** A multipart/form-data body with the headers to send it under. */
export interface EncodedMultipart {
  body: ReadableStream<Uint8Array>;
  /** `multipart/form-data; boundary=…` */
  contentType: string;
  /** Exact byte length of `body`. */
  contentLength: number;
}

/**
 * Builds a multipart/form-data body (RFC 7578): the text fields, then the file streamed from
 * `file.open()` without buffering, under a random boundary, with its exact length.
 */
export function encodeMultipart(fields: readonly (readonly [string, string])[], file: MultipartFile): EncodedMultipart {
  // 144 random bits: the chance of the boundary occurring in the content is nil.
  const boundary = `gateway-${randomBase62(24)}`;
  let head = "";
  for (const [name, value] of fields) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${escapeFormName(name)}"\r\n\r\n${value}\r\n`;
  }
  const contentType = file.contentType.replace(/[\r\n]/g, "") || "application/octet-stream";
  head +=
    `--${boundary}\r\nContent-Disposition: form-data; name="${escapeFormName(file.field)}"; ` +
    `filename="${escapeFormName(file.filename)}"\r\nContent-Type: ${contentType}\r\n\r\n`;
  const encoder = new TextEncoder();
  const headBytes = encoder.encode(head);
  const tailBytes = encoder.encode(`\r\n--${boundary}--\r\n`);
  return {
    body: streamAround(headBytes, file, tailBytes),
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: headBytes.length + file.size + tailBytes.length,
  };
}

/**
 * The HTML form encoding of names and filenames (what browsers and RFC 7578 section 2 suggest):
 * `"`, CR and LF become `%22`, `%0D` and `%0A`, so the quoted value cannot end early or
 * break the header line.
 */
function escapeFormName(name: string): string {
  return name.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** `head`, the file's bytes, then `tail`, a pull at a time; a file that is not `size` bytes errors the stream. */
function streamAround(head: Uint8Array, file: MultipartFile, tail: Uint8Array): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (reader === null) {
          reader = file.open().getReader();
          controller.enqueue(head);
          return;
        }
        const { done, value } = await reader.read();
        if (!done) {
          sent += value.length;
          if (sent <= file.size) return controller.enqueue(value);
        }
        if (sent !== file.size) {
          // Sending on would put the body out of step with its Content-Length.
          const error = new Error(
            done ? `The file ended after ${sent} bytes, not the ${file.size} announced` : `The file ran past the ${file.size} bytes announced`,
          );
          await reader.cancel(error).catch(() => {});
          return controller.error(error);
        }
        controller.enqueue(tail);
        controller.close();
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
