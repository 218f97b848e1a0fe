import type { ChatRequest, WireFormat } from "../canonical/chat.ts";
import { UNREPORTED_WARNINGS, type UpstreamWarnings } from "./warnings.ts";

/**
 * Where a translation for an upstream of `format` notes what it could not carry: the call's
 * `warnings`, or nowhere when the caller speaks `format`. Such a caller's body is then laid
 * over the translation (withCallerBody), so what the translation lost goes upstream as the
 * caller sent it, and a warning of the loss would be false. The gateway's own additions to such
 * a request (spec 4.1's Variant defaults) are dropped silently where an upstream refuses them,
 * the caller never having asked for them; so every warning a translation raises for this
 * caller is about its own body, and none is lost. What an adapter says about the call itself
 * (a count it estimated) goes to `warnings` as it is.
 */
export function translationWarnings(request: ChatRequest, format: WireFormat, warnings: UpstreamWarnings): UpstreamWarnings {
  return request.native?.format === format ? UNREPORTED_WARNINGS : warnings;
}

/**
 * The body for an upstream of `format`: the translation, with the caller's own body laid over
 * it when the caller speaks that format, so its exact values and unknown fields win; the
 * translation keeps the `kept` fields (the remapped model). A field the caller sent as null is
 * absent, as the gateway's schemas read it, so the translation's value (a variant default)
 * stands instead of a null the upstream would take for a value.
 */
export function withCallerBody(request: ChatRequest, format: WireFormat, translated: Record<string, unknown>, kept: readonly string[] = []): Record<string, unknown> {
  if (request.native?.format !== format) return translated;
  const body = { ...translated };
  const own = request.native.body;
  // for...in, not Object.entries: this runs on every same-format request, and the entries array was 0.3% of one's CPU.
  for (const field in own) {
    const value = own[field];
    if (value !== null && Object.hasOwn(own, field) && !kept.includes(field)) body[field] = value;
  }
  return body;
}
