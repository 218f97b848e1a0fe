import type { Kysely } from "kysely";
import type { Database, UsageLogInsert } from "../db/schema.ts";
import type { LastUsedTracker } from "../auth/last-used.ts";
import type { Logger } from "../lib/logger.ts";
import { nextTurn } from "../lib/next-turn.ts";
import { settleHolds } from "../billing/settle-holds.ts";
import { syncWriteTransaction, type SyncSql } from "../db/sync-sql.ts";
import { INSERT_USAGE, TOUCH_TOKEN } from "../billing/billing-sql.ts";

interface Pending {
  row: UsageLogInsert;
  /** Funds held for the request, released as its cost is charged. */
  holdMicros: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Groups usage rows of concurrent requests, and the charges for them, into one transaction. `record` resolves once
 * the row is committed, so a route can hold the end of its response until then; the
 * flush runs on the next event-loop turn, so all rows queued in one turn share a commit.
 * Pending `last_used` times are written by the periodic flush.
 */
export class UsageWriter {
  #queue: Pending[] = [];
  #flushing: Promise<void> | null = null;
  #scheduled = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sql: SyncSql,
    private readonly lastUsed: LastUsedTracker,
    private readonly log: Logger,
  ) {}

  /** Queues one usage row and its settlement; resolves when both are committed. */
  record(row: UsageLogInsert, holdMicros = 0): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ row, holdMicros, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Writes everything queued now. `withLastUsed` (the periodic flush and shutdown) also
   * writes the pending last-used times, which would otherwise cost an UPDATE per batch.
   */
  async flush(withLastUsed = false): Promise<void> {
    while (this.#flushing) await this.#flushing;
    const batch = this.#queue;
    this.#queue = [];
    const touched = withLastUsed ? this.lastUsed.drain() : new Map<string, number>();
    if (batch.length === 0 && touched.size === 0) return;
    this.#flushing = this.#write(batch, touched).finally(() => {
      this.#flushing = null;
    });
    await this.#flushing;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    nextTurn(() => {
      this.#scheduled = false;
      this.flush().catch(() => {});
      // Rows queued while a flush was running need a turn of their own.
      if (this.#queue.length > 0) this.#schedule();
    });
  }

  async #write(batch: Pending[], touched: Map<string, number>): Promise<void> {
    try {
      await syncWriteTransaction(this.db, this.sql, (sql) => {
        for (const { row } of batch) sql.run(INSERT_USAGE, usageValues(row));
        settleHolds(
          sql,
          batch.map(({ row, holdMicros }) => ({
            userId: row.user_id,
            requestId: row.request_id,
            holdMicros,
            costMicros: row.cost_micros,
            at: row.created_at + row.latency_ms,
          })),
        );
        for (const [tokenId, time] of touched) sql.run(TOUCH_TOKEN, [time, tokenId]);
      });
      for (const pending of batch) pending.resolve();
    } catch (error) {
      this.log.error("usage write failed", { rows: batch.length, error: String(error) });
      for (const pending of batch) pending.reject(error);
    }
  }
}

/** A usage row's values in INSERT_USAGE's column order. */
function usageValues(row: UsageLogInsert): unknown[] {
  return [
    row.id, row.request_id, row.user_id, row.token_id, row.model, row.endpoint, row.prompt_tokens, row.completion_tokens,
    row.cost_micros, row.status, row.latency_ms, row.channel_id ?? null, row.stream, row.created_at,
  ];
}
