import type { StreamFailure, Usage } from "../../canonical/chat.ts";
import { streamFailureStatus } from "../stream-failure-status.ts";
import { formatSseEvent } from "../../streams/sse.ts";
import type { StepOutput } from "../../streams/stream-step.ts";
import { errorBody } from "../../errors/gateway-error.ts";
import { responseObject, type ResponseHead } from "./response-object.ts";

/** A final Response's state, as its last event carries it. */
type FinalState<Item> = Omit<Parameters<typeof responseObject<Item>>[1], "error">;

/**
 * What every Responses stream has, whatever its output items: each event named by its type and
 * numbered in `sequence_number`; response.created and response.in_progress once, before
 * anything else; the Response in its final state for the last event; and on an upstream
 * failure, OpenAI's `error` event (on which the SDK's stream helper rejects) and
 * response.failed, its items still in progress marked incomplete.
 */
export function responsesStreamFrame(head: Omit<ResponseHead, "createdAt">, now: () => number) {
  let sequence = 0;
  let started: ResponseHead | null = null;

  const event = (type: string, data: Record<string, unknown>) => formatSseEvent(JSON.stringify({ type, ...data, sequence_number: sequence++ }), type);
  /** The Response's first two events, once; a part of any kind may come first. */
  const start = (created?: number): string => {
    if (started) return "";
    started = { ...head, createdAt: created ?? Math.floor(now() / 1000) };
    const response = responseObject(started, { status: "in_progress", output: [], usage: null });
    return event("response.created", { response }) + event("response.in_progress", { response });
  };
  return {
    event,
    /** Sends the first two events unless they were sent; `created` is the upstream's time, when the first part gives one. */
    open(controller: StepOutput<string>, created?: number): void {
      const opening = start(created);
      if (opening) controller.enqueue(opening);
    },
    /** The Response as the stream's last event carries it, once the stream is open. */
    final: <Item>(state: FinalState<Item>) => responseObject(started!, state),
    /** How a stream that already began reports a failure: the error event, then the Response, failed. */
    failure(reason: StreamFailure, output: { status?: string }[], usage: Usage | null): string {
      const opening = start();
      for (const item of output) if (item.status === "in_progress") item.status = "incomplete";
      const { message: text, type } = errorBody(streamFailureStatus(reason), reason.message).error;
      return (
        opening +
        event("error", { code: type, message: text, param: null }) +
        event("response.failed", { response: responseObject(started!, { status: "failed", output, usage, error: text }) })
      );
    },
  };
}
