import type { UpstreamWarnings } from "../upstreams/warnings.ts";

/**
 * The first `max` of the caller's stop sequences, for an upstream that refuses a request with
 * more (OpenAI takes 4, Gemini 5): the first ones still stop the answer where they match, and
 * the warnings say the rest were not sent.
 */
export function firstStopSequences(stop: string[], max: number, warnings: UpstreamWarnings): string[] {
  if (stop.length <= max) return stop;
  warnings.add("stop", `the upstream takes at most ${max} stop sequences; only the first ${max} were sent`);
  return stop.slice(0, max);
}

/**
 * The caller's stop sequences but those of whitespace alone ("\n", which OpenAI callers often
 * stop a line at), which Anthropic refuses with a 400 ("each stop sequence must contain
 * non-whitespace"): the rest are sent, and the warnings say the answer does not stop there.
 */
export function stopSequencesWithText(stop: string[], warnings: UpstreamWarnings): string[] {
  const withText = stop.filter((sequence) => sequence.trim() !== "");
  if (withText.length < stop.length) {
    const blank = stop.filter((sequence) => sequence.trim() === "").map((sequence) => JSON.stringify(sequence));
    warnings.add("stop", `${blank.join(", ")} not sent: the upstream takes no stop sequence of whitespace alone, so the answer does not stop there`);
  }
  return withText;
}
