import type { ChatRequest, Untranslated } from "../canonical/chat.ts";
import type { ChatAdapter } from "../upstreams/adapter.ts";
import type { UpstreamWarnings } from "../upstreams/warnings.ts";
import { badRequest, type GatewayError } from "../errors/gateway-error.ts";
import { fieldsLeftBehind } from "./carried-fields.ts";

/** A translation's record of what it could not carry, empty until it finds some: one shape for the three caller formats. */
export function nothingUntranslated(): Untranslated {
  return { replay: [], input: [], fields: [] };
}

/**
 * The number of answers a caller asks for in `field`, when more than one (else undefined).
 * The canonical form carries one answer, so `field` is noted as input only an upstream of the
 * caller's format can take: the request keeps to such channels, or is a 400 naming it.
 */
export function severalAnswers(count: number | null | undefined, field: string, untranslated: Untranslated): number | undefined {
  if (count == null || count <= 1) return undefined;
  untranslated.input.push(`${field} (${count} answers)`);
  return count;
}

/** Whether `adapter` receives the caller's own body, and with it everything the canonical form leaves out. */
export function speaksCallerFormat(request: ChatRequest, adapter: ChatAdapter): boolean {
  return adapter.format !== undefined && adapter.format === request.native?.format;
}

/** Whether the request carries content that only an upstream of the caller's format can take. */
export function needsCallerFormat(request: ChatRequest): boolean {
  return (request.native?.untranslated?.input.length ?? 0) > 0;
}

/** The 400 for a request that needs the caller's format when no channel of the model speaks it. */
export function untranslatableError(request: ChatRequest): GatewayError {
  const items = request.native!.untranslated!.input;
  return badRequest(
    `${items.join(", ")}: only an upstream that speaks the ${request.native!.format} format can take this, and no channel of model '${request.model}' does`,
  );
}

/**
 * Notes, for an upstream of another format, the replayed content and the request fields it
 * is sent without, and what no upstream receives.
 */
export function warnLeftOut(request: ChatRequest, warnings: UpstreamWarnings): void {
  if (request.unhonoured) for (const note of request.unhonoured) warnings.note(note);
  const native = request.native;
  if (!native) return;
  const onlyNative = `only an upstream of the ${native.format} format takes it`;
  const untranslated = native.untranslated;
  for (const item of untranslated?.replay ?? []) warnings.add(item, `left out: ${onlyNative}`);
  for (const field of fieldsLeftBehind(native.format, native.body)) warnings.add(field, `not passed on: ${onlyNative}`);
  for (const field of untranslated?.fields ?? []) warnings.add(field, `not passed on: ${onlyNative}`);
  for (const header of Object.keys(native.headers ?? {})) warnings.add(header, `not passed on: ${onlyNative}`);
  if (untranslated?.prefill) {
    warnings.add(untranslated.prefill, `a prefill, sent as a finished assistant turn: ${onlyNative} as the start of the answer, so the answer does not continue it`);
  }
}
