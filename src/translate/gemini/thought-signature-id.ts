import { newId } from "../../lib/random-id.ts";

/**
 * Gemini gives a function call a `thoughtSignature` (its reasoning, encrypted) and refuses a
 * later turn whose calls come back without it (Gemini 3 answers 400). OpenAI and Anthropic
 * callers have no field for it that their SDKs and frameworks keep, but every one of them
 * sends a call's id back, in the assistant turn and with the tool result. So the signature
 * rides in the id the gateway gives the call: `call_<base62>_ts_<signature as base64url>`,
 * letters, digits, `_` and `-` only, as Anthropic's tool_use ids must be.
 */
const SIGNED_ID = /^call_[0-9A-Za-z]+_ts_([A-Za-z0-9_-]+)$/;

/** A new call id carrying `signature` (standard base64, as Gemini sends it). */
export function callIdCarrying(signature: string): string {
  const base64url = signature.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  return `${newId("call")}_ts_${base64url}`;
}

/** The signature a call id carries, in standard base64, or undefined for any other id. */
export function signatureInCallId(id: string): string | undefined {
  const match = SIGNED_ID.exec(id);
  if (!match) return undefined;
  const base64 = match[1]!.replaceAll("-", "+").replaceAll("_", "/");
  return base64.padEnd(Math.ceil(base64.length / 4) * 4, "=");
}
