import type { StreamPart, Usage } from "../../canonical/chat.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { endAtError } from "../end-at-error.ts";
import { compactionItem } from "./compaction-item.ts";
import { NO_USAGE } from "./compact-conversation.ts";
import type { ResponseHead } from "./response-object.ts";
import { responsesStreamFrame } from "./responses-stream-frame.ts";

/**
 * Canonical parts -> the events of a Response that compacts its conversation (a request whose
 * input ended with a compaction_trigger). The model's summary is held, not streamed, since it
 * goes out encoded in the one output item: when the answer ends, that compaction item's
 * output_item.added and output_item.done, then response.completed with the usage of writing
 * it. Codex CLI takes the item from its `done` event and the usage from the completed
 * Response, and fails the compaction on a stream that ends without one.
 */
export function renderCompactionEvents(head: Omit<ResponseHead, "createdAt">, now: () => number): StreamStep<StreamPart, string> {
  const frame = responsesStreamFrame(head, now);
  let summary = "";
  let usage: Usage | null = null;
  return endAtError((reason) => frame.failure(reason, [], usage), {
    transform(part, controller) {
      if (part.type === "native") return;
      frame.open(controller, part.type === "start" ? part.created : undefined);
      if (part.type === "text-delta") summary += part.text;
      else if (part.type === "usage") usage = part.usage;
    },
    flush(controller) {
      frame.open(controller);
      const item = compactionItem(summary);
      controller.enqueue(frame.event("response.output_item.added", { output_index: 0, item }));
      controller.enqueue(frame.event("response.output_item.done", { output_index: 0, item }));
      const response = frame.final({ status: "completed", output: [item], usage: usage ?? NO_USAGE });
      controller.enqueue(frame.event("response.completed", { response }));
    },
  });
}
