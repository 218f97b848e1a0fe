import type { SignedThinking } from "../canonical/chat.ts";
import type { SyncSql } from "../db/sync-sql.ts";
import type { WriteTurn } from "../db/write-turn.ts";
import type { Logger } from "../lib/logger.ts";
import { sweepExpired } from "./sweep-expired.ts";

/**
 * How long an answer's thinking is kept for the turn that answers its tool calls. A tool runs
 * in seconds, but one a person must approve may wait overnight; after a day the next turn is
 * sent without thinking, as before there was anything to keep.
 */
export const KEEP_THINKING_MS = 24 * 60 * 60_000;
/**
 * The most thinking text one answer may have kept, in characters: about 250,000 tokens, more
 * than any thinking budget. What is kept is bounded by what was paid for: each character is an
 * output token billed to its owner, and goes after a day.
 */
export const MAX_KEPT_THINKING_CHARS = 1_000_000;
const SWEEP_BATCH = 500;

const KEEP = "INSERT OR REPLACE INTO kept_thinking (user_id, tool_call_id, expires_at, blocks_json) VALUES (?, ?, ?, ?)";
/** One read for a whole tool loop: the ids go as a JSON array, the rows come back as one JSON object by id. */
const RECALL = `SELECT json_group_object(tool_call_id, json(blocks_json)) AS kept FROM kept_thinking
  WHERE user_id = ? AND tool_call_id IN (SELECT value FROM json_each(?)) AND expires_at > ?`;
const SWEEP = `DELETE FROM kept_thinking WHERE rowid IN (SELECT rowid FROM kept_thinking WHERE expires_at <= ? ORDER BY expires_at LIMIT ${SWEEP_BATCH})`;

/**
 * The signed thinking of Anthropic answers that called tools, kept for callers of the other
 * formats. Anthropic, thinking, wants a tool-calling turn back with its thinking blocks first,
 * verbatim, when the calls are answered, and refuses it otherwise; a caller of the OpenAI or
 * Gemini format has nowhere to carry them, but does send back the turn's tool call ids. So the
 * gateway keeps the blocks under the turn's first call id, for its owner alone (the id is
 * the upstream's, and two owners' upstreams may make the same one), and puts them back in the
 * turn (ChatDispatcher). In the database, so that whichever instance serves the
 * next turn finds them.
 */
export class KeptThinking {
  constructor(
    private readonly turn: WriteTurn,
    private readonly sql: SyncSql,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  /**
   * Keeps `blocks` for `owner` under `toolCallId`, in the coming write turn's transaction.
   * Resolves once committed, or once it failed: the answer was given and billed whatever
   * becomes of it, so a failure is a warning, and the next turn goes without thinking.
   */
  keep(owner: string, toolCallId: string, blocks: readonly SignedThinking[]): Promise<void> {
    const json = JSON.stringify(blocks);
    if (json.length > MAX_KEPT_THINKING_CHARS) {
      this.log.warn("thinking not kept: too long", { tool_call_id: toolCallId, chars: json.length });
      return Promise.resolve();
    }
    const now = this.now();
    return this.turn
      .run((sql) => void sql.run(KEEP, [owner, toolCallId, now + KEEP_THINKING_MS, json]))
      .catch((error: unknown) => this.log.warn("thinking not kept", { tool_call_id: toolCallId, error: String(error) }));
  }

  /**
   * The thinking kept for `owner` under each of `toolCallIds` that still has some, by id, in
   * one read. A read that fails is a warning: the turn then goes without thinking, as it
   * would have without the keeping.
   */
  recall(owner: string, toolCallIds: readonly string[]): ReadonlyMap<string, SignedThinking[]> {
    try {
      const row = this.sql.get<{ kept: string }>(RECALL, [owner, JSON.stringify(toolCallIds), this.now()]);
      return new Map(Object.entries(JSON.parse(row!.kept) as Record<string, SignedThinking[]>));
    } catch (error) {
      this.log.warn("kept thinking not read", { tool_call_ids: toolCallIds, error: String(error) });
      return new Map();
    }
  }

  /** Deletes the expired rows (reads already pass them by); resolves with how many. */
  sweep(): Promise<number> {
    return sweepExpired(this.turn, SWEEP, SWEEP_BATCH, this.now);
  }
}
