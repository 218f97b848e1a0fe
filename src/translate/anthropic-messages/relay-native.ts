import type { StreamPart } from "../../canonical/chat.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { nativeEventText, relayNativeEvents, withBilledUsage, withCallerModel } from "../relay-native.ts";
import { anthropicErrorEvent } from "./convert-stream.ts";
import { ANTHROPIC_USAGE_FIELD } from "./convert-response.ts";

/**
 * An Anthropic upstream's events relayed to an Anthropic caller; message_start names the
 * caller's model. The SDK dispatches on event names, so an event a compatible upstream sent
 * unnamed is named by its type. A message_delta without the final usage it should carry is
 * held with message_stop to the stream's end, where it gets the usage billed.
 */
export function relayAnthropicEvents(model: string): StreamStep<StreamPart, string> {
  return relayNativeEvents({
    render({ event, body }, billed) {
      const named = event.event === "message" && typeof body.type === "string" ? { ...event, event: body.type } : event;
      if (body.type === "message_delta") return nativeEventText(named, body, withBilledUsage(body, ANTHROPIC_USAGE_FIELD, billed));
      const message = body.message as Record<string, unknown> | undefined;
      if (body.type !== "message_start" || !message) return nativeEventText(named, body, body);
      const shown = withCallerModel(message, model);
      return nativeEventText(named, body, shown === message ? body : { ...body, message: shown });
    },
    ends: ({ body }) => body.type === "message_stop" || (body.type === "message_delta" && body.usage == null),
    fails: ({ body }) => body.type === "error",
    errorEvent: anthropicErrorEvent,
  });
}
