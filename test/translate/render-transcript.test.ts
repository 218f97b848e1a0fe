import { describe, expect, test } from "bun:test";
import { TRANSCRIPT_FORMATS, type Transcript } from "../../src/canonical/transcript.ts";
import {
  formatTimestamp,
  parseVerboseTranscript,
  renderTranscript,
} from "../../src/translate/transcription/render-transcript.ts";
import { mockTranscript } from "../../src/upstreams/mock/mock-transcript.ts";

const transcript: Transcript = {
  text: "Hello there. General Kenobi.",
  language: "en",
  durationSeconds: 3662,
  segments: [
    { id: 0, start: 0, end: 5.12, text: "Hello there." },
    { id: 1, start: 5.12, end: 3661.5, text: "General Kenobi." },
  ],
};
const PLAIN = "text/plain; charset=utf-8";

describe("renderTranscript", () => {
  test("lists OpenAI's six response formats", () => {
    expect([...TRANSCRIPT_FORMATS]).toEqual(["json", "text", "srt", "verbose_json", "vtt", "diarized_json"]);
  });

  test("json", () => {
    expect(renderTranscript(transcript, "json", "transcribe")).toEqual({
      body: '{"text":"Hello there. General Kenobi."}',
      contentType: "application/json",
    });
  });

  test("text", () => {
    expect(renderTranscript(transcript, "text", "transcribe")).toEqual({ body: "Hello there. General Kenobi.\n", contentType: PLAIN });
  });

  test("srt", () => {
    expect(renderTranscript(transcript, "srt", "transcribe")).toEqual({
      body:
        "1\n00:00:00,000 --> 00:00:05,120\nHello there.\n\n" +
        "2\n00:00:05,120 --> 01:01:01,500\nGeneral Kenobi.\n\n",
      contentType: PLAIN,
    });
  });

  test("vtt", () => {
    expect(renderTranscript(transcript, "vtt", "transcribe")).toEqual({
      body: "WEBVTT\n\n00:00:00.000 --> 00:00:05.120\nHello there.\n\n00:00:05.120 --> 01:01:01.500\nGeneral Kenobi.\n\n",
      contentType: PLAIN,
    });
  });

  test("verbose_json", () => {
    const statistics = '"temperature":0,"avg_logprob":-0.25,"compression_ratio":1.3,"no_speech_prob":0.01';
    expect(renderTranscript(transcript, "verbose_json", "transcribe")).toEqual({
      body:
        '{"task":"transcribe","language":"english","duration":3662,"text":"Hello there. General Kenobi.","segments":[' +
        `{"id":0,"seek":0,"start":0,"end":5.12,"text":" Hello there.","tokens":[3918,3710,43614],${statistics}},` +
        `{"id":1,"seek":0,"start":5.12,"end":3661.5,"text":" General Kenobi.","tokens":[6009,37529,20161,15294],${statistics}}]}`,
      contentType: "application/json",
    });
  });

  test("verbose_json names the task and the segment's 30 s window", () => {
    const late: Transcript = { ...transcript, segments: [{ id: 0, start: 3600.4, end: 3605, text: "Late." }] };
    const parsed = JSON.parse(renderTranscript(late, "verbose_json", "translate").body);
    expect(parsed.task).toBe("translate");
    expect(parsed.segments[0].seek).toBe(360_000);
  });

  test("an empty transcript renders empty cues", () => {
    const empty: Transcript = { text: "", language: "en", durationSeconds: 0, segments: [] };
    expect(renderTranscript(empty, "srt", "transcribe").body).toBe("");
    expect(renderTranscript(empty, "vtt", "transcribe").body).toBe("WEBVTT\n\n");
    expect(renderTranscript(empty, "text", "transcribe").body).toBe("\n");
    expect(JSON.parse(renderTranscript(empty, "verbose_json", "transcribe").body).segments).toEqual([]);
  });
});

describe("formatTimestamp", () => {
  test("hours, minutes, seconds and milliseconds", () => {
    expect(formatTimestamp(3661.5, ",")).toBe("01:01:01,500");
    expect(formatTimestamp(3661.5, ".")).toBe("01:01:01.500");
    expect(formatTimestamp(0, ",")).toBe("00:00:00,000");
    expect(formatTimestamp(59.9996, ",")).toBe("00:01:00,000");
    expect(formatTimestamp(0.0004, ".")).toBe("00:00:00.000");
  });

  test("hours keep at least two digits and grow past 99", () => {
    expect(formatTimestamp(360_000, ",")).toBe("100:00:00,000");
    expect(formatTimestamp(35_999.999, ",")).toBe("09:59:59,999");
  });

  test("negative and non-finite times read as zero", () => {
    for (const seconds of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatTimestamp(seconds, ",")).toBe("00:00:00,000");
  });
});

describe("parseVerboseTranscript", () => {
  test("round-trips verbose_json", () => {
    for (const t of [transcript, mockTranscript("round-trip", 75.25, { translate: false, language: "fr" })]) {
      expect(parseVerboseTranscript(JSON.parse(renderTranscript(t, "verbose_json", "transcribe").body))).toEqual(t);
    }
  });

  test("reads OpenAI's documented example shape", () => {
    const upstream = {
      task: "transcribe",
      language: "english",
      duration: 8.470000267028809,
      text: "The beach was a popular spot on a hot summer day.",
      segments: [
        {
          id: 0, seek: 0, start: 0.0, end: 3.319999933242798, text: " The beach was a popular spot on a hot summer day.",
          tokens: [50364, 440], temperature: 0.0, avg_logprob: -0.286, compression_ratio: 1.236, no_speech_prob: 0.0098,
        },
      ],
    };
    expect(parseVerboseTranscript(upstream)).toEqual({
      text: "The beach was a popular spot on a hot summer day.",
      language: "en",
      durationSeconds: 8.470000267028809,
      segments: [{ id: 0, start: 0, end: 3.319999933242798, text: "The beach was a popular spot on a hot summer day." }],
    });
  });

  test("is lenient about everything but text", () => {
    expect(parseVerboseTranscript({ text: "Hi", language: "Klingon", segments: [null, { start: "0", end: 1, text: "x" }, { start: 0, end: 2, text: " Hi" }] })).toEqual({
      text: "Hi",
      language: "klingon",
      durationSeconds: 2,
      segments: [{ id: 0, start: 0, end: 2, text: "Hi" }],
    });
    expect(parseVerboseTranscript({ text: "" })).toEqual({ text: "", language: "", durationSeconds: 0, segments: [] });
  });

  test("returns null when there is no transcript", () => {
    for (const json of [null, "text", 42, [], {}, { text: 5 }]) expect(parseVerboseTranscript(json)).toBeNull();
  });
});
