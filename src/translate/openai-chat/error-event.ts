import type { StreamFailure } from "../../canonical/chat.ts";
import { errorBody } from "../../errors/gateway-error.ts";
import { formatSseEvent } from "../../streams/sse.ts";
import { streamFailureStatus } from "../stream-failure-status.ts";

/** The spec's error body as one SSE event: how a chat completions stream that already began reports a failure. */
export function openAiErrorEvent(failure: StreamFailure): string {
  return formatSseEvent(JSON.stringify(errorBody(streamFailureStatus(failure), failure.message)));
}
