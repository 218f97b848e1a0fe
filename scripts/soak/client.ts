import { sleep } from "../../test/helpers/common.ts";
import type { Random } from "../chaos/random.ts";
import { encodeMultipart } from "../../src/multipart/encode-multipart.ts";
import type { Call, Upload } from "./calls.ts";

/** How a request ended, as the client saw it. */
export type Ending =
  /** A 2xx read to its end, whole by the call's measure. */
  | "whole"
  /** A 2xx whose body ended but is not a whole answer (a stream ended by an error event). */
  | "not whole"
  /** A non-2xx, read to its end. */
  | "refused"
  /** The client hung up on purpose before the response head (mid-upload for an upload). */
  | "hung up early"
  /** The client hung up on purpose while reading the body. */
  | "hung up midway"
  /** The connection broke without the client hanging up. */
  | "cut off"
  /** The request passed its timeout: it hung. */
  | "timeout";

export interface Outcome {
  call: Call;
  /** Which instance (0 or 1) it went to. */
  instance: number;
  status: number | null;
  requestId: string | null;
  ending: Ending;
  /** The start of the body of a non-2xx or of an answer that was not whole. */
  sample: string;
}

/** How a client means to end a request: read it all, hang up before the answer, or in the middle of it. */
export type Plan = "read" | "early" | "midway";

const PIECE_BYTES = 16 * 1024;

/**
 * An upload as multipart/form-data (the gateway's own encoder), its file sent 16 KiB at a
 * time; with `hangUpAt`, the client stops before that piece and hangs up, mid-upload.
 */
function uploadBody(upload: Upload, hangUpAt: number | null, hangUp: () => void): { body: ReadableStream<Uint8Array>; contentType: string } {
  const { file } = upload;
  let at = 0;
  const open = () =>
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (hangUpAt !== null && at === hangUpAt * PIECE_BYTES) {
          await sleep(20);
          hangUp();
          return;
        }
        controller.enqueue(file.subarray(at, at + PIECE_BYTES));
        at += PIECE_BYTES;
        if (at >= file.length) controller.close();
      },
    });
  return encodeMultipart(upload.fields, { field: "file", filename: upload.filename, contentType: "audio/wav", size: file.length, open });
}

/**
 * Sends `call` to `baseUrl` and reads the answer the way `plan` says, within `timeoutMs`;
 * never throws. A planned hang-up of an upload happens mid-upload.
 */
export async function send(baseUrl: string, instance: number, call: Call, plan: Plan, random: Random, timeoutMs: number): Promise<Outcome> {
  const controller = new AbortController();
  let timedOut = false;
  let hungUp = false;
  const hangUp = () => {
    hungUp = true;
    controller.abort();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const outcome: Outcome = { call, instance, status: null, requestId: null, ending: "cut off", sample: "" };
  const upload = typeof call.body === "object" ? call.body : null;
  if (plan === "early" && !upload) setTimeout(hangUp, random.int(0, 30));
  const hangUpAt = upload && plan !== "read" ? random.int(0, Math.ceil(upload.file.length / PIECE_BYTES) - 1) : null;
  const multipart = upload && uploadBody(upload, hangUpAt, hangUp);
  const headers = multipart ? { ...call.headers, "content-type": multipart.contentType } : call.headers;
  try {
    const response = await fetch(baseUrl + call.path, { method: call.method, headers, body: multipart?.body ?? (call.body as string | undefined), signal: controller.signal });
    outcome.status = response.status;
    outcome.requestId = response.headers.get("x-request-id");
    // A whole answer is read in one piece or a few; a stream's body in many.
    const hangUpAfter = plan === "midway" && !upload ? random.int(0, call.streamed ? 6 : 0) : null;
    const { text, ended } = await readBody(response, hangUpAfter, hangUp);
    const ok = response.status >= 200 && response.status < 300;
    outcome.ending = !ended ? (hungUp ? "hung up midway" : "cut off") : !ok ? "refused" : call.whole(text) ? "whole" : "not whole";
    if (outcome.ending !== "whole") outcome.sample = text.slice(-300);
  } catch {
    outcome.ending = outcome.status === null && hungUp ? "hung up early" : hungUp ? "hung up midway" : "cut off";
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) outcome.ending = "timeout";
  return outcome;
}

/** Reads a body to its end, or hangs up after `hangUpAfter` chunks; whether it ended, and its text. */
async function readBody(response: Response, hangUpAfter: number | null, hangUp: () => void): Promise<{ text: string; ended: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (let chunks = 0; ; chunks++) {
    if (chunks === hangUpAfter) {
      hangUp();
      await reader.cancel().catch(() => {});
      return { text, ended: false };
    }
    const { done, value } = await reader.read();
    if (done) return { text, ended: true };
    text += decoder.decode(value, { stream: true });
  }
}
