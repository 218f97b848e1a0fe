import type { StreamFailure, StreamPart } from "../../canonical/chat.ts";
import { streamFailureStatus } from "../stream-failure-status.ts";
import type { MediaStreamEnd } from "../../canonical/media.ts";
import { errorBody } from "../../errors/gateway-error.ts";
import { formatSseEvent } from "../../streams/sse.ts";
import type { StreamStep } from "../../streams/stream-step.ts";
import { nativeEventText, relayNativeEvents } from "../relay-native.ts";

/**
 * How a media stream that already began reports a failure: an event typed `error`, as its
 * other events are typed, carrying the spec's error object, which the OpenAI SDK raises as an
 * APIError after the events that did arrive.
 */
export function mediaErrorEvent(failure: StreamFailure): string {
  return formatSseEvent(JSON.stringify({ type: "error", ...errorBody(streamFailureStatus(failure), failure.message) }), "error");
}

/**
 * A media stream's events relayed to the caller as they came. The last end event (`end`) is
 * held to the stream's end, which comes only once its usage row is committed; a failure ends
 * the stream with mediaErrorEvent.
 */
export function relayMediaEvents(end: MediaStreamEnd): StreamStep<StreamPart, string> {
  let ends = 0;
  return relayNativeEvents({
    render: ({ event, body }) => nativeEventText(event, body, body),
    ends: ({ body }) => body.type === end.type && ++ends === end.count,
    errorEvent: mediaErrorEvent,
  });
}
