import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { SPEECH_FORMATS, SPEECH_STREAM_END, type SpeechRequest } from "../../canonical/media.ts";
import { chargedUnlessBroken } from "../../dispatch/media-dispatcher.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { fieldsOutside, parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema } from "../../lib/schemas.ts";
import { numberInRange } from "../../lib/validate.ts";
import { admitRequest } from "../admit-request.ts";
import { defaultModelFor } from "./default-model.ts";
import { modelResponse } from "../response-headers.ts";
import { mediaEventsResponse } from "./media-events-response.ts";

/** Spec section 8: the longest text one speech request may speak. */
const MAX_INPUT_CHARACTERS = 4096;
/**
 * A voice: a name (spec 4.9's six, those OpenAI added since, or whatever an OpenAI-compatible
 * speech server names its own), or OpenAI's custom voice object `{"id": "voice_..."}`. The
 * upstream knows its voices; the gateway checks only the form.
 */
const VoiceSchema = v.union(
  [v.pipe(v.string(), v.minLength(1), v.maxLength(200)), v.strictObject({ id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) })],
  "must be a voice name or an object with the id of a custom voice",
);

/** Characters as people count them (code points), not UTF-16 units. */
const characterCount = (text: string) => [...text].length;

const SpeechRequestSchema = v.object({
  model: v.optional(ModelIdSchema),
  input: v.pipe(
    v.string("must be a string"),
    v.minLength(1, "must not be empty"),
    v.check((text) => characterCount(text) <= MAX_INPUT_CHARACTERS, `must be at most ${MAX_INPUT_CHARACTERS} characters`),
  ),
  voice: v.optional(VoiceSchema, "alloy"),
  response_format: v.optional(v.picklist(SPEECH_FORMATS, `must be one of ${SPEECH_FORMATS.join(", ")}`), "mp3"),
  speed: v.optional(numberInRange(0.25, 4), 1),
  instructions: v.optional(v.string()),
  // `audio`: the bytes as they come; `sse`: OpenAI's speech.audio.delta events, then speech.audio.done.
  stream_format: v.optional(v.picklist(["audio", "sse"], "must be 'audio' or 'sse'"), "audio"),
});

/**
 * POST /v1/audio/speech (spec 4.9): the audio streams through as the upstream sends it, as
 * bytes or as OpenAI's events. Priced per 1K characters, so the hold is the exact cost; a
 * client that stops listening halfway still pays for the whole text, which the upstream was
 * asked to speak and bills.
 */
export function speechRoutes(services: Services) {
  return new Hono<AppEnv>().post("/v1/audio/speech", requireApiKey(services, "audio"), async (c) => {
    const raw = await readJsonBody(c.req.raw, services.config.bodyTimeoutMs);
    const body = parseOrThrow(SpeechRequestSchema, raw);
    const model = body.model ?? defaultModelFor(services, c.get("principal"), "speech");
    const usage = { inputTokens: 0, outputTokens: 0, characters: characterCount(body.input) };
    const { meter, rateLimitHeaders } = await admitRequest(c, services, { model, mode: "speech", stream: true, maxUsage: usage });
    const request: SpeechRequest = {
      model,
      input: body.input,
      voice: body.voice,
      format: body.response_format,
      speed: body.speed,
      instructions: body.instructions,
      extraFields: fieldsOutside(SpeechRequestSchema, raw),
    };
    const signal = c.req.raw.signal;
    if (body.stream_format === "sse") {
      const served = await services.media.streamEvents(model, "streamSpeech", meter, signal, (adapter, call) => adapter.streamSpeech(request, call), chargedUnlessBroken(usage));
      return mediaEventsResponse(served.value.events, SPEECH_STREAM_END, { rateLimitHeaders, served, requestId: c.get("requestId") });
    }
    const served = await services.media.stream(model, "speak", meter, signal, (adapter, call) => adapter.speak(request, call), usage);
    return modelResponse(served.value.body, { "content-type": served.value.contentType }, { rateLimitHeaders, served, requestId: c.get("requestId") });
  });
}
