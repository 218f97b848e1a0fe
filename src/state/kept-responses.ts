import type { OutputItem } from "../translate/openai-responses/convert-response.ts";
import type { InputItem } from "../translate/openai-responses/request-schema.ts";

/** How long a Response is kept after it was made: its chain, its items and itself. */
export const KEEP_RESPONSES_MS = 60 * 60_000;
/** The most text kept at once, in UTF-16 units (at most 64 MB); the oldest Responses go first past it. */
const MAX_KEPT_CHARS = 32 * 1024 * 1024;
/** What a value costs beside its text: a number, a key, a nesting. */
const VALUE_OVERHEAD_CHARS = 8;

/** A Response as kept: what its caller got, and what it was asked with. */
export interface KeptResponse {
  /** The Response object as returned whole, or as the last event of its stream gave it. */
  readonly response: { readonly id: string; readonly output: readonly OutputItem[] };
  /** Its request's own input items, item references resolved: not those of the Responses before it. */
  readonly input: readonly InputItem[];
  /** The Response it continued (its `previous_response_id`), if it named one. */
  readonly previousId: string | undefined;
}

interface Entry {
  owner: string;
  kept: KeptResponse;
  chars: number;
  until: number;
}

/** A chain of Responses, oldest first, or the id of its first link that is not kept. */
export type Chain = { links: KeptResponse[] } | { missing: string };

/** Roughly the JSON text of a value: what keeping it costs. Request bodies nest at most 128 deep, so recursion is safe. */
function charsOf(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (typeof value !== "object" || value === null) return VALUE_OVERHEAD_CHARS;
  let chars = VALUE_OVERHEAD_CHARS;
  if (Array.isArray(value)) {
    for (const element of value) chars += charsOf(element);
    return chars;
  }
  for (const key in value) chars += key.length + charsOf((value as Record<string, unknown>)[key]);
  return chars;
}

/**
 * Recent Responses, so that a later request can continue one by `previous_response_id`, name
 * one of its output items by `item_reference`, or retrieve or delete it, as OpenAI lets a
 * client do with the Responses it stores (its default). Kept in this process's memory: an
 * hour from when each was made, within a bound on their text, and each for its owner alone.
 */
export class KeptResponses {
  #responses = new Map<string, Entry>();
  /**
   * The ids kept, in the order kept, from `#oldest` on: the oldest, which also expire first,
   * are dropped from the front. Not the map's own order: JSC walks every deleted slot at a
   * map's front before its first live one, which made each drop cost microseconds per
   * request once the bound was reached. A forgotten id stays until it comes to the front.
   */
  #order: string[] = [];
  #oldest = 0;
  /** The kept Responses by the id of each of their output items, for item_reference. */
  #byItem = new Map<string, Entry>();
  #chars = 0;

  constructor(
    private readonly now: () => number,
    private readonly maxChars = MAX_KEPT_CHARS,
  ) {}

  /** Keeps a Response for `owner` (a user id). */
  keep(owner: string, kept: KeptResponse): void {
    const now = this.now();
    const entry: Entry = { owner, kept, chars: charsOf(kept.response) + charsOf(kept.input), until: now + KEEP_RESPONSES_MS };
    this.#responses.set(kept.response.id, entry);
    this.#order.push(kept.response.id);
    for (const item of kept.response.output) this.#byItem.set(item.id, entry);
    this.#chars += entry.chars;
    this.#forgetPast(now);
  }

  /** The Response `id` kept for `owner`, if it still is. */
  recall(owner: string, id: string): KeptResponse | undefined {
    return this.#usable(this.#responses.get(id), owner)?.kept;
  }

  /** The output item `id` of a Response kept for `owner`, if it still is. */
  recallItem(owner: string, id: string): OutputItem | undefined {
    return this.#usable(this.#byItem.get(id), owner)?.kept.response.output.find((item) => item.id === id);
  }

  /**
   * The Responses that lead to `id`, oldest first, each the `previousId` of the next, all kept
   * for `owner`. A chain can be no longer than the Responses kept, so a longer walk, which
   * only a cycle could make, stops there.
   */
  chain(owner: string, id: string): Chain {
    const links: KeptResponse[] = [];
    for (let next: string | undefined = id; next !== undefined; ) {
      const kept = this.recall(owner, next);
      if (!kept || links.length === this.#responses.size) return { missing: next };
      links.push(kept);
      next = kept.previousId;
    }
    return { links: links.reverse() };
  }

  /** Forgets the Response `id` kept for `owner`, and its items; whether there was one. */
  forget(owner: string, id: string): boolean {
    const entry = this.#usable(this.#responses.get(id), owner);
    if (entry) this.#drop(entry);
    return entry !== undefined;
  }

  #usable(entry: Entry | undefined, owner: string): Entry | undefined {
    return entry && entry.owner === owner && entry.until > this.now() ? entry : undefined;
  }

  #drop(entry: Entry): void {
    this.#responses.delete(entry.kept.response.id);
    for (const item of entry.kept.response.output) this.#byItem.delete(item.id);
    this.#chars -= entry.chars;
  }

  /** Drops expired Responses, then the oldest while the text kept is past its bound. */
  #forgetPast(now: number): void {
    for (; this.#oldest < this.#order.length; this.#oldest++) {
      const entry = this.#responses.get(this.#order[this.#oldest]!);
      if (entry && entry.until > now && this.#chars <= this.maxChars) break;
      if (entry) this.#drop(entry);
    }
    // Past half the list, the ids already gone are cut off: each id is moved once at most, on average.
    if (this.#oldest * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#oldest);
      this.#oldest = 0;
    }
  }
}
