import type { MediaStreamEnd } from "../../canonical/media.ts";
import { renderBatches } from "../../streams/render-batches.ts";
import { relayMediaEvents } from "../../translate/openai-media/relay-media-events.ts";
import type { MediaEvents } from "../../upstreams/adapter.ts";
import { modelResponse, SSE_HEADERS, type ModelResponseMeta } from "../response-headers.ts";

/** A media endpoint's 200 as Server-Sent Events: the served events written as each delivery comes (see relayMediaEvents). */
export function mediaEventsResponse(events: MediaEvents, end: MediaStreamEnd, meta: ModelResponseMeta): Response {
  return modelResponse(renderBatches(events, relayMediaEvents(end)), SSE_HEADERS, meta);
}
