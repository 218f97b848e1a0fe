import type { OutputItem } from "../translate/openai-responses/convert-response.ts";

/** How long an answer's output items can be named by item_reference. */
export const KEEP_ITEMS_MS = 60 * 60_000;
/** The most text kept at once, in UTF-16 units (at most 64 MB); the oldest items go first past it. */
const MAX_KEPT_CHARS = 32 * 1024 * 1024;
/** What an item costs beside its text: its id, type and status. */
const ITEM_OVERHEAD_CHARS = 64;

interface Kept {
  owner: string;
  item: OutputItem;
  chars: number;
  until: number;
}

/** The text an item holds: what keeping it costs. */
function charsOf(item: OutputItem): number {
  if (item.type === "function_call") return ITEM_OVERHEAD_CHARS + item.name.length + item.arguments.length;
  if (item.type === "reasoning") return ITEM_OVERHEAD_CHARS + item.summary[0]!.text.length;
  let chars = ITEM_OVERHEAD_CHARS;
  for (const part of item.content) chars += part.type === "output_text" ? part.text.length : part.refusal.length;
  return chars;
}

/**
 * The output items of recent Responses, by id, so that a later request can name one with an
 * item_reference instead of sending it. The AI SDK's Responses provider does that with the
 * assistant's earlier text whenever it stores responses, which is its default and OpenAI's.
 * Only items are kept, never the Response (no previous_response_id), in this process's
 * memory: an hour, within a bound on their text, and each for its owner alone.
 */
export class KeptResponseItems {
  /** In the order kept, so the oldest, which also expire first, are at the front. */
  #items = new Map<string, Kept>();
  #chars = 0;

  constructor(
    private readonly now: () => number,
    private readonly maxChars = MAX_KEPT_CHARS,
  ) {}

  /** Keeps an answer's items for `owner` (a user id). */
  keep(owner: string, items: readonly OutputItem[]): void {
    const until = this.now() + KEEP_ITEMS_MS;
    for (const item of items) {
      const chars = charsOf(item);
      this.#items.set(item.id, { owner, item, chars, until });
      this.#chars += chars;
    }
    this.#forgetPast(this.now());
  }

  /** The item `id` kept for `owner`, if it still is. */
  recall(owner: string, id: string): OutputItem | undefined {
    const kept = this.#items.get(id);
    return kept && kept.owner === owner && kept.until > this.now() ? kept.item : undefined;
  }

  /** Drops expired items, then the oldest while the text kept is past its bound. */
  #forgetPast(now: number): void {
    for (const [id, kept] of this.#items) {
      if (kept.until > now && this.#chars <= this.maxChars) return;
      this.#items.delete(id);
      this.#chars -= kept.chars;
    }
  }
}
