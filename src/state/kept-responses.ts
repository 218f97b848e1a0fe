import type { OutputItem } from "../translate/openai-responses/convert-response.ts";
import type { InputItem } from "../translate/openai-responses/request-schema.ts";
import type { SyncSql } from "../db/sync-sql.ts";
import type { WriteTurn } from "../db/write-turn.ts";
import type { Logger } from "../lib/logger.ts";
import { RowInserter } from "../db/insert-rows.ts";
import { sweepExpired } from "./sweep-expired.ts";

/** How long a Response is kept after it was made: its chain, its items and itself. */
export const KEEP_RESPONSES_MS = 60 * 60_000;
/** Expired Responses deleted per write job: a sweep after a busy hour takes several turns, not one long one. */
const SWEEP_BATCH = 500;

/** A Response as kept: what its caller got, and what it was asked with. */
export interface KeptResponse {
  /** The Response object as returned whole, or as the last event of its stream gave it. */
  readonly response: { readonly id: string; readonly output: readonly OutputItem[] };
  /** Its request's own input items, item references resolved: not those of the Responses before it. */
  readonly input: readonly InputItem[];
  /** The Response it continued (its `previous_response_id`), if it named one. */
  readonly previousId: string | undefined;
}

/** A chain of Responses, oldest first, or the id of its first link that is not kept. */
export type Chain = { links: KeptResponse[] } | { missing: string };

// The size is the JSON's length in characters (its `bytes` column): the bound is approximate by
// nature, and SQLite's octet_length needs 3.43, which a remote libSQL server may not have.
const INSERT_RESPONSE = "INSERT INTO kept_responses (id, user_id, created_at, expires_at, bytes, kept_json) VALUES (?, ?, ?, ?, ?, ?)";
const ITEMS = new RowInserter("INSERT INTO kept_response_items (item_id, response_id) VALUES (?, ?)");
const TOTAL_BYTES = "SELECT bytes FROM kept_responses_total WHERE id = 1";
const DROP_OLDEST = "DELETE FROM kept_responses WHERE id = (SELECT id FROM kept_responses ORDER BY expires_at LIMIT 1)";
const RECALL = "SELECT kept_json FROM kept_responses WHERE id = ? AND user_id = ? AND expires_at > ?";
const RECALL_BY_ITEM =
  "SELECT r.kept_json FROM kept_response_items i JOIN kept_responses r ON r.id = i.response_id WHERE i.item_id = ? AND r.user_id = ? AND r.expires_at > ?";
const FORGET = "DELETE FROM kept_responses WHERE id = ? AND user_id = ? AND expires_at > ?";
const SWEEP = `DELETE FROM kept_responses WHERE id IN (SELECT id FROM kept_responses WHERE expires_at <= ? ORDER BY expires_at LIMIT ${SWEEP_BATCH})`;

/**
 * Recent Responses, so that a later request can continue one by `previous_response_id`, name
 * one of its output items by `item_reference`, or retrieve or delete it, as OpenAI lets a
 * client do with the Responses it stores (its default). Kept in the database (migration
 * 016), so every instance sharing it and the next start see them: an hour from when each was
 * made, within a bound on their text, and each for its owner alone. Every read goes to the
 * database, by a primary key, so a Response deleted or expired anywhere is gone everywhere
 * at once; nothing is cached in memory that could outlive it.
 */
export class KeptResponses {
  constructor(
    private readonly turn: WriteTurn,
    private readonly sql: SyncSql,
    private readonly now: () => number,
    private readonly log: Logger,
    /** The most JSON text kept at once, in characters, by every instance together (Config.keptResponsesMaxChars). */
    private readonly maxChars: number,
  ) {}

  /**
   * Keeps a Response for `owner` (a user id) in the coming write turn's transaction. Resolves
   * once it is committed, or once it failed: its request was answered and billed whatever
   * becomes of it, so a failure is a warning and the Response is simply not kept.
   */
  keep(owner: string, kept: KeptResponse): Promise<void> {
    const now = this.now();
    const id = kept.response.id;
    // Written now: the objects are the caller's answer, and nothing must change them before the turn.
    const json = JSON.stringify(kept);
    const items = kept.response.output.map((item) => [item.id, id]);
    return this.turn
      .run((sql) => {
        sql.run(INSERT_RESPONSE, [id, owner, now, now + KEEP_RESPONSES_MS, json.length, json]);
        ITEMS.insert(sql, items);
        // Oldest first, one at a time: at the bound a keep drops about as much as it adds, a row or two.
        while (sql.get<{ bytes: number }>(TOTAL_BYTES, [])!.bytes > this.maxChars && sql.run(DROP_OLDEST, []) > 0);
      })
      .catch((error: unknown) => this.log.warn("Response not kept", { response_id: id, error: String(error) }));
  }

  /** The Response `id` kept for `owner`, if it still is. */
  recall(owner: string, id: string): KeptResponse | undefined {
    return this.#read(RECALL, id, owner);
  }

  /** The output item `id` of a Response kept for `owner`, if it still is. */
  recallItem(owner: string, id: string): OutputItem | undefined {
    return this.#read(RECALL_BY_ITEM, id, owner)?.response.output.find((item) => item.id === id);
  }

  /**
   * The Responses that lead to `id`, oldest first, each the `previousId` of the next, all kept
   * for `owner`. A link met twice, which only a cycle could make, ends the walk there, so it
   * reads each kept Response once at most.
   */
  chain(owner: string, id: string): Chain {
    const links: KeptResponse[] = [];
    const walked = new Set<string>();
    for (let next: string | undefined = id; next !== undefined; next = links.at(-1)!.previousId) {
      const kept = walked.has(next) ? undefined : this.recall(owner, next);
      if (!kept) return { missing: next };
      walked.add(next);
      links.push(kept);
    }
    return { links: links.reverse() };
  }

  /** Forgets the Response `id` kept for `owner`, and its items; resolves, once committed, with whether there was one. */
  async forget(owner: string, id: string): Promise<boolean> {
    let forgotten = 0;
    await this.turn.run((sql) => {
      forgotten = sql.run(FORGET, [id, owner, this.now()]);
    });
    return forgotten > 0;
  }

  /** Deletes the expired Responses and their items (reads already pass them by), SWEEP_BATCH a job; resolves with how many. */
  sweep(): Promise<number> {
    return sweepExpired(this.turn, SWEEP, SWEEP_BATCH, this.now);
  }

  #read(query: string, id: string, owner: string): KeptResponse | undefined {
    const row = this.sql.get<{ kept_json: string }>(query, [id, owner, this.now()]);
    return row && (JSON.parse(row.kept_json) as KeptResponse);
  }
}
