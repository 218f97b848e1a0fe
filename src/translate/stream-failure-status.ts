import type { ErrorStatus } from "../errors/gateway-error.ts";
import type { StreamFailure } from "../canonical/chat.ts";
import type { StreamEnd } from "../streams/tap-stream.ts";

/**
 * The status a failure after a stream began stands for, in its error event and its usage row:
 * an upstream gone silent past the idle limit is a timeout (504) and an upstream that said it is
 * overloaded or rate limited mid-answer is that (503, 429), as the same failures before the
 * headers are, so a caller's retry logic and an operator's usage filters tell them from a
 * broken upstream (502, everything else).
 */
export function streamFailureStatus(failure: StreamFailure): ErrorStatus {
  if (failure.timedOut) return 504;
  if (failure.status === 429) return 429;
  if (failure.status === 503 || failure.status === 529) return 503;
  return 502;
}

/** A stream's usage-row status by how it ended: one cut at the deadline for a client that stopped reading is the gateway's 502. */
const STREAM_END_STATUS: Record<StreamEnd, ErrorStatus | 200 | 499> = { complete: 200, cancelled: 499, failed: 502, stalled: 502 };

/**
 * The usage-row status of a stream that ended as `end`: its failure's (streamFailureStatus)
 * when the upstream broke it with an error event, even if the client hung up after that event.
 */
export function streamEndStatus(end: StreamEnd, failure?: StreamFailure): number {
  return failure ? streamFailureStatus(failure) : STREAM_END_STATUS[end];
}
