import { jsonObjectOrUndefined } from "../lib/parse-json.ts";

/**
 * Tool-call arguments text as the JSON object that Anthropic's `input` and Gemini's `args`
 * must be. Arguments that are not a JSON object (a model's malformed output) become {}.
 */
export function parseToolArguments(text: string): Record<string, unknown> {
  return jsonObjectOrUndefined(text) ?? {};
}
