/**
 * Tool-call arguments text as the JSON object that Anthropic's `input` and Gemini's `args`
 * must be. Arguments that are not a JSON object (a model's malformed output) become {}.
 */
export function parseToolArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
