import * as v from "valibot";

/** An upstream stream event: its JSON as sent, and what the schema read from it. */
export interface ParsedStreamEvent<T> {
  json: Record<string, unknown>;
  value: T;
}

/**
 * One upstream stream event's data as `schema` describes it, or null when it is not JSON,
 * does not fit, or is a provider error object (`{"error": ...}`): each is the end of a
 * usable stream, which the decoder turns into an error part.
 */
export function parseStreamEvent<S extends v.GenericSchema>(schema: S, data: string): ParsedStreamEvent<v.InferOutput<S>> | null {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return null;
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) return null;
  if ("error" in json && (json as { type?: unknown }).type !== "error") return null;
  const parsed = v.safeParse(schema, json);
  return parsed.success ? { json: json as Record<string, unknown>, value: parsed.output } : null;
}

/** Why an event parseStreamEvent refused ends the stream: the provider's own message when it sent an error object. */
export function unusableEventMessage(data: string): string {
  try {
    const message = (JSON.parse(data) as { error?: { message?: unknown } } | null)?.error?.message;
    if (typeof message === "string" && message !== "") return `upstream error: ${message.slice(0, 500)}`;
  } catch {
    // not JSON: malformed
  }
  return "upstream sent a malformed stream event";
}
