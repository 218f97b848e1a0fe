/** One timed stretch of a transcript; times are seconds from the start of the audio. */
export interface TranscriptSegment {
  id: number;
  start: number;
  end: number;
  text: string;
}

/**
 * The canonical transcript every transcription or translation upstream answer becomes, and
 * every response format is rendered from. `language` is an ISO-639-1 code such as "en";
 * renderers spell it out where OpenAI does. Segment text carries no leading space.
 */
export interface Transcript {
  text: string;
  language: string;
  durationSeconds: number;
  segments: TranscriptSegment[];
}

/** The `response_format` values of OpenAI's audio transcription and translation endpoints. */
export const TRANSCRIPT_FORMATS = ["json", "text", "srt", "verbose_json", "vtt", "diarized_json"] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** The formats answered as a JSON object with the transcript's text (the others are plain text or subtitles). */
export const isJsonTranscriptFormat = (format: TranscriptFormat) => format === "json" || format === "verbose_json" || format === "diarized_json";

/** Which audio endpoint is asked: transcriptions, or translations (always into English). */
export type TranscriptTask = "transcribe" | "translate";
