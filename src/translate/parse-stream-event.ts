import * as v from "valibot";

/**
 * One upstream stream event's data as `schema` describes it, or null when it is not JSON,
 * does not fit, or is a provider error object (`{"error": ...}`): each is the end of a
 * usable stream, which the decoder turns into an error part.
 */
export function parseStreamEvent<S extends v.GenericSchema>(schema: S, data: string): v.InferOutput<S> | null {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return null;
  }
  if (json !== null && typeof json === "object" && "error" in json && (json as { type?: unknown }).type !== "error") return null;
  const parsed = v.safeParse(schema, json);
  return parsed.success ? parsed.output : null;
}
