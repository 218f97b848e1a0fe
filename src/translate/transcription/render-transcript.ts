import type { Transcript, TranscriptFormat, TranscriptSegment, TranscriptTask } from "../../canonical/transcript.ts";
import { languageCode, languageName } from "../../canonical/language-codes.ts";
import { estimateTokens } from "../../lib/estimate-tokens.ts";
import { hashFnv1a } from "../../lib/hash-fnv1a.ts";

/** A rendered response body and the Content-Type OpenAI sends with it. */
export interface RenderedTranscript {
  body: string;
  contentType: string;
}

// OpenAI answers text, srt and vtt all as text/plain (seen on api.openai.com for srt), not
// application/x-subrip or text/vtt; clients such as the openai SDKs read them as plain strings.
const PLAIN_TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json";

// Whisper's segment statistics are not known for mock or re-rendered transcripts; these are
// typical values for clear speech (avg_logprob above -1, compression_ratio below 2.4).
const SEGMENT_STATISTICS = { temperature: 0, avg_logprob: -0.25, compression_ratio: 1.3, no_speech_prob: 0.01 };
// Whisper's vocabulary size: placeholder token ids stay inside it.
const WHISPER_TEXT_TOKENS = 50257;
// Whisper reads audio in 30 s windows whose offset is counted in 10 ms frames.
const WINDOW_SECONDS = 30;
const FRAMES_PER_SECOND = 100;

/** Renders a transcript in one of OpenAI's audio response formats, shaped as OpenAI's own. */
export function renderTranscript(t: Transcript, format: TranscriptFormat, task: TranscriptTask): RenderedTranscript {
  switch (format) {
    case "json":
      return { body: JSON.stringify({ text: t.text }), contentType: JSON_TYPE };
    case "text":
      return { body: `${t.text}\n`, contentType: PLAIN_TEXT };
    case "srt":
      return { body: t.segments.map((s, i) => `${i + 1}\n${formatCueTimes(s, ",")}\n${s.text}\n\n`).join(""), contentType: PLAIN_TEXT };
    case "vtt":
      return { body: `WEBVTT\n\n${t.segments.map((s) => `${formatCueTimes(s, ".")}\n${s.text}\n\n`).join("")}`, contentType: PLAIN_TEXT };
    case "verbose_json":
      return { body: JSON.stringify(toVerboseJson(t, task)), contentType: JSON_TYPE };
    case "diarized_json":
      return { body: JSON.stringify(toDiarizedJson(t)), contentType: JSON_TYPE };
  }
}

/**
 * OpenAI's diarized_json object. A transcript that does not tell its speakers apart has one,
 * labelled as OpenAI labels speakers it was not introduced to: `A`.
 */
function toDiarizedJson(t: Transcript): Record<string, unknown> {
  return { task: "transcribe", duration: t.durationSeconds, text: t.text, segments: t.segments.map(diarizedSegment) };
}

/** One segment as diarized_json lists it, and as a diarized stream sends it in its own event. */
export function diarizedSegment(s: TranscriptSegment) {
  return { type: "transcript.text.segment", id: `seg_${s.id}`, start: s.start, end: s.end, text: s.text, speaker: "A" };
}

/** The `start --> end` line of a subtitle cue; SRT writes milliseconds after a comma, WebVTT after a dot. */
function formatCueTimes(segment: TranscriptSegment, separator: "," | "."): string {
  return `${formatTimestamp(segment.start, separator)} --> ${formatTimestamp(segment.end, separator)}`;
}

/** HH:MM:SS,mmm with hours at least two digits (more past 99 h); negative or NaN reads as 0. */
export function formatTimestamp(seconds: number, separator: "," | "."): string {
  const totalMs = Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0;
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor(totalMs / 60_000) % 60;
  const secs = Math.floor(totalMs / 1000) % 60;
  const ms = totalMs % 1000;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(hours)}:${two(minutes)}:${two(secs)}${separator}${String(ms).padStart(3, "0")}`;
}

/** OpenAI's verbose_json object: language spelled out, Whisper's leading space on segment text. */
function toVerboseJson(t: Transcript, task: TranscriptTask): Record<string, unknown> {
  return {
    task,
    language: languageName(t.language),
    duration: t.durationSeconds,
    text: t.text,
    segments: t.segments.map((s) => ({
      id: s.id,
      seek: Math.floor(s.start / WINDOW_SECONDS) * WINDOW_SECONDS * FRAMES_PER_SECOND,
      start: s.start,
      end: s.end,
      text: ` ${s.text}`,
      tokens: placeholderTokens(s.text),
      ...SEGMENT_STATISTICS,
    })),
  };
}

/** Stand-in token ids, one per estimated token (4-character chunk), stable for the same text. */
function placeholderTokens(text: string): number[] {
  return Array.from({ length: estimateTokens(text) }, (_, i) => hashFnv1a(text.slice(i * 4, i * 4 + 4)) % WHISPER_TEXT_TOKENS);
}

/**
 * The transcript in an upstream's verbose_json answer, read leniently: only text is required;
 * language may be a name ("english") or a code; duration falls back to the last segment's
 * end; malformed segments are skipped; an absent language reads as "". Null when there is no
 * text to read.
 */
export function parseVerboseTranscript(json: unknown): Transcript | null {
  if (!isRecord(json) || typeof json.text !== "string") return null;
  const segments: TranscriptSegment[] = [];
  for (const item of Array.isArray(json.segments) ? json.segments : []) {
    if (!isRecord(item) || !isNumber(item.start) || !isNumber(item.end) || typeof item.text !== "string") continue;
    const id = Number.isInteger(item.id) ? Number(item.id) : segments.length;
    segments.push({ id, start: item.start, end: item.end, text: item.text.trim() });
  }
  const language = typeof json.language === "string" ? (languageCode(json.language) ?? json.language.toLowerCase()) : "";
  const durationSeconds = isNumber(json.duration) ? json.duration : (segments.at(-1)?.end ?? 0);
  return { text: json.text.trim(), language, durationSeconds, segments };
}

/** Whether value is a plain JSON object. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether value is a finite number. */
function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}
