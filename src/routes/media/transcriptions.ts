import * as v from "valibot";
import { Hono, type Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { TRANSCRIPT_STREAM_END, type TranscriptionRequest, type TranscriptionResult } from "../../canonical/media.ts";
import { chargedUnlessBroken } from "../../dispatch/media-dispatcher.ts";
import { TRANSCRIPT_FORMATS, type TranscriptTask } from "../../canonical/transcript.ts";
import { isIso6391 } from "../../canonical/language-codes.ts";
import { probeAudio, type AudioProbe } from "../../audio/probe-audio.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { badRequest, GatewayError } from "../../errors/gateway-error.ts";
import { parseOrThrow, numberInRange } from "../../lib/validate.ts";
import { ModelIdSchema } from "../../lib/schemas.ts";
import { renderTranscript } from "../../translate/transcription/render-transcript.ts";
import { receiveMultipartUpload, type ReceivedUpload } from "../../uploads/receive-upload.ts";
import { admitRequest, refuseIfRateLimited } from "../admit-request.ts";
import { defaultModelFor } from "./default-model.ts";
import { modelResponse } from "../response-headers.ts";
import { mediaEventsResponse } from "./media-events-response.ts";

/**
 * Text fields are held in memory. One may be a speaker reference of gpt-4o-transcribe-diarize
 * (`known_speaker_references[]`: 2 to 10 s of audio as a data URL, about 0.9 MB as 24 kHz WAV),
 * and a request names up to four.
 */
const FIELD_LIMITS = { maxFieldBytes: 1024 * 1024, maxFieldsBytes: 4 * 1024 * 1024 + 64 * 1024, maxParts: 64 };

/** The upload endpoints: exempt from the JSON body limit, bounded by the upload cap instead. */
export const TRANSCRIPTION_PATHS = ["/v1/audio/transcriptions", "/v1/audio/translations"] as const;

/** Form fields arrive as strings; numbers are parsed here. */
const TranscriptionFieldsSchema = v.object({
  model: v.optional(ModelIdSchema),
  language: v.optional(v.pipe(v.string(), v.check(isIso6391, "must be an ISO-639-1 code such as 'en'"), v.toLowerCase())),
  prompt: v.optional(v.string()),
  response_format: v.optional(v.picklist(TRANSCRIPT_FORMATS, `must be one of ${TRANSCRIPT_FORMATS.join(", ")}`), "json"),
  temperature: v.optional(v.pipe(v.string(), v.nonEmpty("must be a number between 0 and 1"), v.transform(Number), numberInRange(0, 1))),
  // As the SDK sends a boolean in a form; `true` answers OpenAI's transcript.text.* events.
  stream: v.optional(v.picklist(["true", "false"], "must be 'true' or 'false'")),
});

/** The multipart body, spooled to a temp file; a client that hangs up mid-upload is a 499. */
async function receive(c: Context<AppEnv>, services: Services): Promise<ReceivedUpload> {
  const contentType = c.req.header("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw badRequest("The request must be multipart/form-data with the audio in a 'file' part");
  }
  try {
    const limits = { maxFileBytes: services.config.maxUploadBytes, maxQuietMs: services.config.bodyTimeoutMs, ...FIELD_LIMITS };
    return await receiveMultipartUpload(c.req.raw.body, contentType, services.createTempUpload, limits);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    if (c.req.raw.signal.aborted) throw new GatewayError(499, "The client closed the request during the upload");
    throw badRequest("The upload ended before the multipart body was complete");
  }
}

/** The response body of a result, in the requested format. */
function render(result: TranscriptionResult, request: TranscriptionRequest): { body: string; contentType: string } {
  return result.kind === "rendered" ? result : renderTranscript(result.transcript, request.responseFormat, request.task);
}

/**
 * Seconds of audio a result bills: the upstream's own count where it gave one the file can
 * hold (0 to its most, rounded up to a whole second, as OpenAI bills; for M4A and WebM, which
 * their size does not bound, their header's length), else the header's. A negative count
 * made the request free, and 1e12 s charged 100 million USD for a few seconds of speech.
 */
function billedSeconds(result: TranscriptionResult, probe: AudioProbe): number {
  const reported = result.kind === "transcript" ? result.transcript.durationSeconds : result.durationSeconds;
  const most = Math.ceil(Number.isFinite(probe.mostSeconds) ? probe.mostSeconds : probe.durationSeconds);
  return reported !== null && reported >= 0 && reported <= most ? reported : probe.durationSeconds;
}

/**
 * POST /v1/audio/transcriptions and /v1/audio/translations (spec 4.10, 4.11): the upload is
 * streamed to a temp file under the size cap, its duration read from its header, and priced
 * per minute. A transcription may stream as events (`stream=true`); a client that hangs up
 * once they have begun pays for the whole file, as one that leaves a whole answer once it has
 * begun does. The temp file is removed once the response is built, whatever happened: the
 * upstream has read the upload by the time it answers.
 */
export function transcriptionRoutes(services: Services) {
  const auth = requireApiKey(services, "audio");
  const serve = (task: TranscriptTask) => async (c: Context<AppEnv>) => {
    // Before the upload is spooled to disk and probed: a key at its limit costs no disk or CPU.
    refuseIfRateLimited(c, services);
    const upload = await receive(c, services);
    try {
      const fields = parseOrThrow(TranscriptionFieldsSchema, upload.fields);
      if (task === "translate" && fields.response_format === "diarized_json") {
        throw badRequest("Invalid 'response_format': diarized_json is a transcription's; a translation is json, text, srt, verbose_json or vtt", "response_format");
      }
      const stream = fields.stream === "true";
      // OpenAI's API reference documents no stream of a translation, which its SDK sends whole.
      if (task === "translate" && stream) throw badRequest("Invalid 'stream': a translation is answered whole; only transcriptions stream", "stream");
      const { file } = upload;
      if (!file) throw badRequest("'file' is required");
      if (file.size === 0) throw badRequest("Invalid 'file': the file is empty");
      const probe = await probeAudio(file);
      if (!probe) throw badRequest("Invalid 'file': not an audio file in a format the gateway reads (mp3, wav, flac, ogg, m4a, webm)");
      if (probe.durationSeconds > probe.mostSeconds) {
        // The hold and the bill follow the header: one that claims more than the file holds is false.
        const [claimed, most] = [probe.durationSeconds, probe.mostSeconds].map((seconds) => Math.round(seconds * 1000) / 1000);
        throw badRequest(`Invalid 'file': its header claims ${claimed} s of audio, but ${file.size} bytes of ${probe.format} hold at most ${most} s`);
      }
      const model = fields.model ?? defaultModelFor(services, c.get("principal"), "transcription");
      const usageOf = (audioSeconds: number) => ({ inputTokens: 0, outputTokens: 0, audioSeconds });
      // Held at whole seconds: an upstream that bills whole seconds (OpenAI's usage) charges no more.
      const { meter, rateLimitHeaders } = await admitRequest(c, services, { model, mode: "transcription", stream, maxUsage: usageOf(Math.ceil(probe.durationSeconds)) });
      const request: TranscriptionRequest = {
        model,
        task,
        file: { filename: file.filename, contentType: file.contentType, size: file.size, open: () => file.open(), read: (o, l) => file.read(o, l), durationSeconds: probe.durationSeconds },
        responseFormat: fields.response_format,
        ...(fields.language === undefined ? {} : { language: fields.language }),
        ...(fields.prompt === undefined ? {} : { prompt: fields.prompt }),
        ...(fields.temperature === undefined ? {} : { temperature: fields.temperature }),
        // A text field named "file" beside the file part is not sent: the upstream reads one file.
        extraFields: upload.entries.filter(([name]) => name !== "file" && !Object.hasOwn(TranscriptionFieldsSchema.entries, name)),
      };
      const signal = c.req.raw.signal;
      const wholeUsage = (result: TranscriptionResult) => usageOf(billedSeconds(result, probe));
      // A stream's transcript is billed at the header's length: its end event counts tokens, not seconds.
      const served = stream
        ? await services.media.streamEvents(model, "streamTranscript", meter, signal, (adapter, call) => adapter.streamTranscript(request, call), {
            ...chargedUnlessBroken(usageOf(probe.durationSeconds)),
            whole: wholeUsage,
          })
        : await services.media.call(model, "transcribe", meter, signal, (adapter, call) => adapter.transcribe(request, call), wholeUsage);
      const meta = { rateLimitHeaders, served, requestId: c.get("requestId") };
      if (served.value.kind === "events") return mediaEventsResponse(served.value.events, TRANSCRIPT_STREAM_END, meta);
      const { body, contentType } = render(served.value, request);
      return modelResponse(body, { "content-type": contentType }, meta);
    } finally {
      await upload.file?.remove();
    }
  };
  return new Hono<AppEnv>()
    .post(TRANSCRIPTION_PATHS[0], auth, serve("transcribe"))
    .post(TRANSCRIPTION_PATHS[1], auth, serve("translate"));
}
