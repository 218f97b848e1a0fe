import type { ChatMessage } from "../../canonical/chat.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import { bytesToBase64 } from "../../lib/base64.ts";
import { newId } from "../../lib/random-id.ts";

/**
 * A `compaction` item's `encrypted_content` as the gateway writes it: this prefix, then the
 * base64url of `{"summary": "..."}`. Nothing in it is secret (it carries the caller's own
 * conversation back to the caller), so it is encoded, not encrypted; the version in the
 * prefix lets a later form be told from this one.
 */
const PREFIX = "gw1.";

/** Tells a model that a user turn holds the summary of what came before it, not a request. */
const SUMMARY_INTRO = "The earlier part of this conversation was compacted into the summary below; carry on from it.\n\n";

/** Why an item the gateway did not write cannot be read, in the 400 that refuses it. */
const UNREADABLE =
  "is not a compaction the gateway made, so its summary cannot be read (OpenAI's own compactions are encrypted with OpenAI's keys): compact the conversation again through the gateway, or send it whole";

/** A compaction item's `encrypted_content` carrying `summary`. */
export function encryptedContentOf(summary: string): string {
  const base64 = bytesToBase64(new TextEncoder().encode(JSON.stringify({ summary })));
  return PREFIX + base64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The summary in a compaction item's `encrypted_content`, or undefined when the gateway did not write it. */
function summaryIn(encrypted: string): string | undefined {
  if (!encrypted.startsWith(PREFIX)) return undefined;
  try {
    const binary = atob(encrypted.slice(PREFIX.length).replaceAll("-", "+").replaceAll("_", "/"));
    const json: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (char) => char.charCodeAt(0))));
    const summary = (json as { summary?: unknown } | null)?.summary;
    return typeof summary === "string" ? summary : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A compaction item of a conversation as the canonical turn that stands in for it: a user
 * turn, since every upstream kind takes one anywhere in a conversation (a system message is
 * moved to the front by Anthropic and Gemini, and an assistant turn at the end would be a
 * prefill). `where` names the item in the 400 of one the gateway cannot read.
 */
export function summaryMessageOf(encrypted: string, where: string): ChatMessage {
  const summary = summaryIn(encrypted);
  if (summary === undefined) throw badRequest(`Invalid '${where}.encrypted_content': ${where} ${UNREADABLE}`, `${where}.encrypted_content`);
  return { role: "user", parts: [{ type: "text", text: SUMMARY_INTRO + summary }] };
}

/** An output compaction item carrying `summary`, as POST /v1/responses/compact ends its output with one. */
export function compactionItem(summary: string) {
  return { type: "compaction" as const, id: newId("cmp"), encrypted_content: encryptedContentOf(summary) };
}
