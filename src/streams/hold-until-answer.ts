import type { StreamFailure, StreamPart } from "../canonical/chat.ts";
import { UpstreamError, type UpstreamFailure } from "../upstreams/upstream-error.ts";
import type { BatchSource } from "./batch-source.ts";

/**
 * Parts that are the answer itself; what comes before them (its id, its prompt's size, native
 * framing) is not. A thinking model's first words are its reasoning: holding them would delay
 * the caller's first byte by the whole wait. An Anthropic caller's own content_block_delta
 * counts too, whatever it carries (a signature, a citation).
 */
function isAnswer(part: StreamPart): boolean {
  if (part.type === "native") return part.event.event === "content_block_delta";
  return (
    part.type === "text-delta" ||
    part.type === "reasoning-delta" ||
    part.type === "refusal-delta" ||
    part.type === "tool-call-start" ||
    part.type === "tool-call-delta" ||
    part.type === "finish"
  );
}

const WAIT_OVER = Symbol("wait over");

function failureKindOf(failure: StreamFailure): UpstreamFailure {
  if (failure.timedOut) return "timeout";
  if (failure.unusable) return "unusable";
  return failure.status ? "status" : "protocol";
}

/**
 * Reads a supervised stream (one whose failures come as an error part) until the first part
 * of its answer, its end, or `waitMs`, and gives back a source that starts with what it held.
 * A stream that fails before that has shown the caller nothing, so it rejects with an
 * UpstreamError and the next channel is tried as after a failure before the headers: an
 * upstream that answers 200 and then breaks, or sends its error as the first event, no longer
 * ends the caller's stream at once, and counts against its channel. An error event that names
 * its status (an error object's code or type) counts as that status: a prompt too long for
 * the model is the caller's 400, final, and an upstream's rate limit its 429. Past `waitMs`
 * it lets go of the stream, so a model that thinks for long still gets its response head and
 * keep-alives; with an infinite `waitMs` it holds until the answer (or the failure that the
 * supervisor's idle limit makes of silence). `isAnswerPart` says which parts are the answer
 * (a media stream's: each of its events).
 */
export async function holdUntilAnswer(
  source: BatchSource<StreamPart>,
  waitMs: number,
  isAnswerPart: (part: StreamPart) => boolean = isAnswer,
): Promise<BatchSource<StreamPart>> {
  const held: StreamPart[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waitOver = new Promise<typeof WAIT_OVER>((resolve) => {
    if (Number.isFinite(waitMs)) timer = setTimeout(resolve, waitMs, WAIT_OVER);
  });
  let pending: Promise<StreamPart[] | null> | null = null;
  try {
    for (;;) {
      const read = source.read();
      const batch = await Promise.race([read, waitOver]);
      if (batch === WAIT_OVER || batch === null) {
        pending = read;
        break;
      }
      const answered = batch.findIndex(isAnswerPart);
      const failure = batch.find((part, i) => part.type === "error" && (answered === -1 || i < answered));
      // The supervisor has already stopped the upstream read. An error event that named its
      // status counts as that status answered before the headers: a 400 is the caller's.
      if (failure?.type === "error") throw new UpstreamError(failureKindOf(failure), failure.message, failure.status);
      held.push(...batch);
      if (answered !== -1) break;
    }
  } finally {
    clearTimeout(timer);
  }
  const queued: Promise<StreamPart[] | null>[] = [];
  if (held.length > 0) queued.push(Promise.resolve(held));
  if (pending) queued.push(pending);
  return {
    read: () => queued.shift() ?? source.read(),
    cancel: (reason) => source.cancel(reason),
  };
}
