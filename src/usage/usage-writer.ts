import type { UsageLogInsert } from "../db/schema.ts";
import type { LastUsedTracker } from "../auth/last-used.ts";
import type { Logger } from "../lib/logger.ts";
import { settleHolds } from "../billing/settle-holds.ts";
import { TurnBatch, type Journal, type WriteTurn } from "../db/write-turn.ts";
import type { Hold } from "../billing/hold-batcher.ts";
import type { LeaseBook } from "../billing/lease-book.ts";
import type { SyncSql } from "../db/sync-sql.ts";
import { INSERT_USAGE, TOUCH_TOKEN } from "../billing/billing-sql.ts";
import { RowInserter } from "../db/insert-rows.ts";
import { isDatabaseBusy } from "../db/database-busy.ts";

interface Pending {
  row: UsageLogInsert;
  /** Funds held for the request, released as its cost is charged. */
  hold: Hold | null;
  /** Writes tried so far that found the database busy. */
  busyAttempts: number;
  resolve(): void;
  reject(error: unknown): void;
}

/** Writes a settlement tries while the database stays busy (each waits out the busy timeout, 10 s) before it is given up. */
const MAX_BUSY_ATTEMPTS = 6;
/** Pause before a busy settlement is queued again. */
const BUSY_RETRY_MS = 100;

/**
 * Groups the usage rows of requests that finish in one event-loop turn, and the charges for
 * them, into one job of that turn's write transaction. `record` resolves once the row is
 * committed, so a route can hold the end of its response until then. A write that found the
 * database busy (another process held the write lock past the busy timeout) wrote nothing
 * and is queued again, up to MAX_BUSY_ATTEMPTS: dropped, the request went unrecorded and
 * unpaid after the upstream had served it, and its hold stayed reserved. Pending
 * `last_used` times are written by the periodic flush.
 */
export class UsageWriter {
  readonly #batch: TurnBatch<Pending, void>;

  constructor(
    private readonly turn: WriteTurn,
    private readonly lastUsed: LastUsedTracker,
    private readonly leases: LeaseBook,
    private readonly log: Logger,
  ) {
    this.#batch = new TurnBatch(turn, (sql, batch, journal) => writeRows(sql, batch, leases, journal), (batch, outcome) => {
      if (outcome.ok) {
        for (const pending of batch) pending.resolve();
        return;
      }
      const busy = isDatabaseBusy(outcome.error);
      const again = batch.filter((pending) => busy && ++pending.busyAttempts < MAX_BUSY_ATTEMPTS);
      if (again.length > 0) {
        this.log.warn("usage write waits for a busy database", { rows: again.length });
        setTimeout(() => again.forEach((pending) => this.#batch.push(pending)), BUSY_RETRY_MS);
      }
      if (again.length < batch.length) this.#giveUp(batch.filter((pending) => !again.includes(pending)), outcome.error);
    });
  }

  /** Queues one usage row and its settlement; resolves when both are committed. */
  record(row: UsageLogInsert, hold: Hold | null = null): Promise<void> {
    return new Promise((resolve, reject) => this.#batch.push({ row, hold, busyAttempts: 0, resolve, reject }));
  }

  /**
   * Resolves once every row queued so far is committed, and the pending last-used times with
   * them (the periodic flush and shutdown; per batch they would cost an UPDATE each).
   */
  flush(withLastUsed = false): Promise<void> {
    const touched = withLastUsed ? this.lastUsed.drain() : new Map<string, number>();
    if (touched.size === 0) return this.turn.idle();
    // Jobs commit in the order they were queued, so this one ends after every row before it.
    return this.turn.run((sql) => {
      for (const [tokenId, time] of touched) sql.run(TOUCH_TOKEN, [time, tokenId]);
    });
  }

  /** Rejects settlements that will not be written; what they drew on a lease is no longer in flight, and stays reserved. */
  #giveUp(batch: Pending[], error: unknown): void {
    this.log.error("usage write failed", { rows: batch.length, error: String(error) });
    for (const { row, hold, reject } of batch) {
      if (hold?.leased) this.leases.release(row.user_id, hold.micros);
      reject(error);
    }
  }
}

const USAGE_ROWS = new RowInserter(INSERT_USAGE);

/** Inserts the usage rows and settles their holds. */
function writeRows(sql: SyncSql, batch: Pending[], leases: LeaseBook, journal: Journal): void {
  USAGE_ROWS.insert(sql, batch.map(({ row }) => usageValues(row)));
  settleHolds(
    sql,
    batch.map(({ row, hold }) => ({
      userId: row.user_id,
      requestId: row.request_id,
      hold,
      costMicros: row.cost_micros,
      startedAt: row.created_at,
      at: row.created_at + row.latency_ms,
    })),
    leases,
    journal,
  );
}

/** A usage row's values in INSERT_USAGE's column order. */
function usageValues(row: UsageLogInsert): unknown[] {
  return [
    row.id, row.request_id, row.user_id, row.token_id, row.model, row.endpoint, row.prompt_tokens, row.completion_tokens,
    row.cost_micros, row.status, row.latency_ms, row.channel_id ?? null, row.stream, row.created_at,
  ];
}
