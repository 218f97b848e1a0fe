import type { SyncSql } from "../db/sync-sql.ts";
import { TurnBatch, type Journal, type WriteTurn } from "../db/write-turn.ts";
import type { Logger } from "../lib/logger.ts";
import { isDatabaseBusy } from "../db/database-busy.ts";
import { whyDatabaseUnwritable } from "../db/database-unwritable.ts";
import { DEBIT_BALANCE, INSERT_HOLD, INSERT_LEDGER, SELECT_HEADROOM } from "./billing-sql.ts";
import { LeaseBook } from "./lease-book.ts";

/** Funds held for one request: how much, and whether on this instance's lease or as a hold row of its own. */
export interface Hold {
  micros: number;
  leased: boolean;
}

/** How long a hold waits for other instances to close their leases before it is refused. */
const LEASE_WAIT_MS = 1_500;
/** How often a waiting hold looks again. */
const LEASE_RETRY_MS = 20;

interface PendingHold {
  userId: string;
  amountMicros: number;
  requestId: string;
  createdAt: number;
  /** Until when a refusal may still wait for other instances' leases to close. */
  waitUntil: number;
  resolve(hold: Hold | null): void;
  reject(error: unknown): void;
}

/** What the write job decided for one pending hold. */
type Decision = Hold | "refused" | "wait";

/** An account as one write job sees it: its balance and what all instances have leased of it. */
interface Headroom {
  balance: number;
  leased: number;
  othersOpen: boolean;
}

/**
 * Takes holds on account balances before upstream calls. A hold the instance's lease on the
 * account covers is granted at once, in memory (LeaseBook). Any other is decided in a job of
 * the turn's write transaction (BEGIN IMMEDIATE, so correct across processes sharing the
 * database), in arrival order: it extends the lease while the account is far from empty, or
 * else takes a hold row of its own (ledger row, hold row, balance debited) if the balance
 * not reserved by leases covers it. A hold that does not fit while another instance still
 * draws on a lease waits for that lease to close, then is decided again.
 */
export class HoldBatcher {
  readonly #batch: TurnBatch<PendingHold, Decision[]>;

  constructor(
    private readonly turn: WriteTurn,
    private readonly leases: LeaseBook,
    private readonly instanceId: () => string,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {
    this.#batch = new TurnBatch(turn, (sql, batch, journal) => this.#write(sql, batch, journal), (batch, outcome) => {
      if (outcome.ok) {
        batch.forEach((pending, i) => this.#conclude(pending, outcome.result[i]!));
        return;
      }
      const { error } = outcome;
      // A busy database is an outage of another process's making, and one the machine will not
      // write is logged once by DatabaseWritable; either is answered 503, not this code's fault.
      const outage = isDatabaseBusy(error) || whyDatabaseUnwritable(error) !== null;
      this.log[outage ? "warn" : "error"]("hold batch failed", { holds: batch.length, error: error instanceof Error ? error.name : "unknown" });
      for (const pending of batch) pending.reject(error);
    });
  }

  /** Holds `amountMicros` of the account for a request; null when the balance cannot cover it. */
  hold(userId: string, amountMicros: number, requestId: string, createdAt: number): Promise<Hold | null> {
    if (this.leases.draw(userId, amountMicros)) return Promise.resolve({ micros: amountMicros, leased: true });
    return new Promise((resolve, reject) =>
      this.#batch.push({ userId, amountMicros, requestId, createdAt, waitUntil: this.now() + LEASE_WAIT_MS, resolve, reject }),
    );
  }

  /**
   * Closes the leases nobody drew on for `idleMs`, giving their free funds back to the
   * accounts; with 0, every lease (at shutdown: what requests in flight hold stays reserved).
   */
  closeIdleLeases(idleMs?: number): Promise<void> {
    if (this.leases.idleAccounts(idleMs).length === 0) return Promise.resolve();
    return this.turn.run((sql, journal) => {
      // Looked at again inside the job: a request may have drawn on one since.
      for (const userId of this.leases.idleAccounts(idleMs)) this.leases.close(sql, userId, journal);
    });
  }

  #conclude(pending: PendingHold, decision: Decision): void {
    if (decision === "refused") pending.resolve(null);
    else if (decision !== "wait") pending.resolve(decision);
    else setTimeout(() => this.#batch.push(pending), LEASE_RETRY_MS);
  }

  #write(sql: SyncSql, batch: PendingHold[], journal: Journal): Decision[] {
    const accounts = new Map<string, Headroom | undefined>();
    const debits = new Map<string, number>();
    const instanceId = this.instanceId();
    const now = this.now();
    const decisions = batch.map((pending): Decision => {
      const { userId, amountMicros: micros } = pending;
      if (this.leases.draw(userId, micros, journal)) return { micros, leased: true };
      if (!accounts.has(userId)) accounts.set(userId, readHeadroom(sql, userId, instanceId));
      const account = accounts.get(userId);
      // Leases move no money, so the balance counts them: a hold above it is one that no lease
      // closing, here or on another instance, could make room for. Refused at once, it keeps this
      // instance's lease and does not hold the account's token reservation through the wait.
      if (!account || micros > account.balance) return "refused";
      const leaseSize = LeaseBook.sizeFor(micros, account.balance - account.leased);
      if (leaseSize > 0) {
        this.leases.extend(sql, userId, leaseSize, journal);
        account.leased += leaseSize;
        this.leases.draw(userId, micros, journal);
        return { micros, leased: true };
      }
      // Near the end of the balance: what this instance's lease has free goes back first.
      account.leased -= this.leases.close(sql, userId, journal);
      if (account.balance - account.leased >= micros) {
        account.balance -= micros;
        debits.set(userId, (debits.get(userId) ?? 0) + micros);
        sql.run(INSERT_LEDGER, [userId, "hold", -micros, account.balance, pending.requestId, pending.createdAt]);
        sql.run(INSERT_HOLD, [pending.requestId, userId, micros, instanceId, pending.createdAt]);
        return { micros, leased: false };
      }
      return account.othersOpen && now < pending.waitUntil ? "wait" : "refused";
    });
    for (const [userId, amount] of debits) sql.run(DEBIT_BALANCE, [amount, userId]);
    return decisions;
  }
}

function readHeadroom(sql: SyncSql, userId: string, instanceId: string): Headroom | undefined {
  const row = sql.get<{ balance: number; leased: number; others_open: number }>(SELECT_HEADROOM, [instanceId, userId]);
  return row && { balance: row.balance, leased: row.leased, othersOpen: row.others_open === 1 };
}
