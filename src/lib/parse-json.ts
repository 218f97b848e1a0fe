/** `text` parsed as JSON, or undefined when it is not JSON: for text an upstream or a model wrote. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `text` parsed as a JSON object (not an array, not null), or undefined when it is anything else. */
export function jsonObjectOrUndefined(text: string): Record<string, unknown> | undefined {
  const value = jsonOrUndefined(text);
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
