import type { StreamFailure, StreamPart } from "../canonical/chat.ts";
import type { BatchSource } from "./batch-source.ts";

/**
 * The end of a stream whose usage row could not be committed (a database the machine will not
 * write): its answer does not count, and the caller is told with the format's error event, a
 * 503 to retry, rather than given the end of a response it might take for a success.
 */
export const UNRECORDED_ANSWER: StreamFailure = {
  type: "error",
  message: "The gateway could not record this answer, so it does not count; retry later",
  status: 503,
};

/**
 * What a billed stream's end becomes when its usage row fails to commit. The tap's onEnd
 * passes the commit through `noting`; `around` wraps the tapped source, whose read then
 * rejects, so that a stream that ended well ends with UNRECORDED_ANSWER instead of a
 * connection cut without a word. A failure the caller already got stays its end.
 */
export class UnrecordedEnding {
  #unrecorded = false;

  /** Whether the stream's end was not recorded. */
  get unrecorded(): boolean {
    return this.#unrecorded;
  }

  /** `finishing` (the usage row's commit), noted when it fails for a stream that `endedWell`. */
  noting(finishing: Promise<void>, endedWell: boolean): Promise<void> {
    return finishing.catch((error: unknown) => {
      this.#unrecorded = endedWell;
      throw error;
    });
  }

  /** `source`, ending with UNRECORDED_ANSWER when a read failed because its end was not recorded. */
  around(source: BatchSource<StreamPart>): BatchSource<StreamPart> {
    let ended = false;
    return {
      read: async () => {
        if (ended) return null;
        try {
          return await source.read();
        } catch (error) {
          if (!this.#unrecorded) throw error;
          ended = true;
          return [UNRECORDED_ANSWER];
        }
      },
      cancel: (reason) => source.cancel(reason),
    };
  }
}
