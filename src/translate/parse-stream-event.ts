import * as v from "valibot";
import type { StreamPart } from "../canonical/chat.ts";
import { errorObjectStatus } from "./error-event-status.ts";
import { jsonOrUndefined } from "../lib/parse-json.ts";

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

/**
 * The error part for an event parseStreamEvent refused, which ends the stream: with the
 * provider's own message, and the status its error object stands for, when it sent one.
 */
export function unusableEventPart(data: string): Extract<StreamPart, { type: "error" }> {
  // Not JSON, or JSON without an error object: malformed.
  const error = (jsonOrUndefined(data) as { error?: { message?: unknown } } | null | undefined)?.error;
  const message = error?.message;
  if (typeof message !== "string" || message === "") return { type: "error", message: "upstream sent a malformed stream event" };
  return providerErrorPart(`upstream error: ${message.slice(0, 500)}`, error);
}

/** An error part saying `message`, with the status the provider's error object `error` stands for, when it names one. */
export function providerErrorPart(message: string, error: unknown): Extract<StreamPart, { type: "error" }> {
  const status = errorObjectStatus(error);
  return status === undefined ? { type: "error", message } : { type: "error", message, status };
}
