import type { SyncSql } from "../db/sync-sql.ts";
import type { Journal } from "../db/write-turn.ts";
import { CLOSE_LEASE, DELETE_LEASE, EXTEND_LEASE, SHRINK_LEASE } from "./billing-sql.ts";

/** A lease is taken only while the account's unreserved balance covers this many of the hold... */
const LEASE_HEADROOM_HOLDS = 1024;
/** ...and reserves this many of them, or an eighth of that balance if it is less. */
const LEASE_HOLDS = 256;
/** A lease nobody drew on for this long is closed, so that other instances can have its funds. */
export const LEASE_IDLE_MS = 250;

interface Lease {
  /** Reserved in the database and not yet spent (the row's amount_micros). */
  reserved: number;
  /** Held by this instance's requests in flight; never more than `reserved`. */
  drawn: number;
  /** Whether holds may still be drawn (the row's `open`). */
  open: boolean;
  lastDrawAt: number;
}

/**
 * This instance's balance leases. A lease reserves part of an account's balance in the
 * database (balance_leases); the holds of that account's requests are then drawn on it in
 * memory, without a write transaction each, and each request's hold and settlement reach the
 * ledger together when it finishes. The lease's row is what keeps other instances from
 * granting the same funds: every grant in the database checks the balance minus every lease.
 *
 * Leases are taken only while the account is far from empty (LEASE_HEADROOM_HOLDS). Near the
 * end of a balance, an instance closes its lease when it cannot draw on it (giving back what
 * is not in flight), other instances wait for open leases to close before they refuse a
 * request with 402 (HoldBatcher), and idle leases are closed after LEASE_IDLE_MS. So exactly
 * the requests the balance covers are served, however many instances share the database.
 *
 * Methods that take `sql` run inside a write job and record their in-memory change in the
 * job's journal; `draw` and `release` run outside any transaction.
 */
export class LeaseBook {
  readonly #leases = new Map<string, Lease>();

  constructor(
    private readonly instanceId: () => string,
    private readonly now: () => number,
  ) {}

  /** How much a new or extended lease reserves for a hold of `micros` when `headroom` of the balance is unreserved; 0: none. */
  static sizeFor(micros: number, headroom: number): number {
    if (headroom < micros * LEASE_HEADROOM_HOLDS) return 0;
    return Math.max(micros, Math.min(micros * LEASE_HOLDS, Math.floor(headroom / 8)));
  }

  /** Holds `micros` of the account on this instance's open lease; false when the lease cannot cover it. */
  draw(userId: string, micros: number, journal?: Journal): boolean {
    const lease = this.#leases.get(userId);
    if (!lease || !lease.open || lease.reserved - lease.drawn < micros) return false;
    lease.drawn += micros;
    lease.lastDrawAt = this.now();
    journal?.push(() => (lease.drawn -= micros));
    return true;
  }

  /**
   * A request drawn on the lease finished: its hold no longer counts as in flight. Whatever
   * it did not spend stays reserved until `spend` or `close` says otherwise. In a write job
   * (its settlement) the journal undoes it, since a settlement rolled back is tried again;
   * without one (a settlement given up), the hold stays reserved and free, as the database
   * has it.
   */
  release(userId: string, micros: number, journal?: Journal): void {
    const lease = this.#leases.get(userId);
    if (!lease) return;
    const before = lease.drawn;
    lease.drawn = Math.max(0, before - micros);
    journal?.push(() => (lease.drawn = before));
  }

  /** Reserves `micros` more of the account for this instance and opens its lease. */
  extend(sql: SyncSql, userId: string, micros: number, journal: Journal): void {
    const at = this.now();
    sql.run(EXTEND_LEASE, [userId, this.instanceId(), micros, at]);
    let lease = this.#leases.get(userId);
    if (!lease) {
      const created: Lease = { reserved: 0, drawn: 0, open: false, lastDrawAt: at };
      this.#leases.set(userId, (lease = created));
      journal.push(() => this.#forgetIfEmpty(userId, created));
    }
    const wasOpen = lease.open;
    const extended = lease;
    extended.reserved += micros;
    extended.open = true;
    journal.push(() => {
      extended.reserved -= micros;
      extended.open = wasOpen;
    });
  }

  /**
   * A finished request (already `release`d) spent funds of the lease: its hold of
   * `holdMicros` leaves the reservation (what it did not cost goes back to the balance), and a
   * cost above the hold is taken from the lease's free part while there is one, so the
   * reservation never exceeds what the balance still backs. Only in memory; returns the amount
   * taken, which `writeSpent` must write in the same write job, summed per account, so that a
   * batch of requests costs one statement per account.
   */
  spend(userId: string, holdMicros: number, costMicros: number, journal: Journal): number {
    const lease = this.#leases.get(userId);
    if (!lease) return 0;
    const free = lease.reserved - lease.drawn - holdMicros;
    const amount = holdMicros + Math.max(0, Math.min(costMicros - holdMicros, free));
    lease.reserved -= amount;
    journal.push(() => (lease.reserved += amount));
    return amount;
  }

  /** Writes `micros` that `spend` took off the account's lease; a lease with nothing left loses its row. */
  writeSpent(sql: SyncSql, userId: string, micros: number, journal: Journal): void {
    const lease = this.#leases.get(userId);
    if (lease && micros > 0) this.#writeShrink(sql, userId, lease, micros, journal);
  }

  /**
   * Stops drawing on the account's lease and gives back its free part, keeping what requests
   * in flight hold. Returns the amount given back to the unreserved balance.
   */
  close(sql: SyncSql, userId: string, journal: Journal): number {
    const lease = this.#leases.get(userId);
    // A closed lease can have free funds again: a settlement that failed to commit.
    if (!lease || (!lease.open && lease.reserved === lease.drawn)) return 0;
    const free = lease.reserved - lease.drawn;
    const wasOpen = lease.open;
    lease.open = false;
    journal.push(() => (lease.open = wasOpen));
    if (lease.drawn > 0) {
      sql.run(CLOSE_LEASE, [lease.drawn, this.now(), userId, this.instanceId()]);
      lease.reserved = lease.drawn;
      journal.push(() => (lease.reserved += free));
    } else {
      this.#shrink(sql, userId, lease, lease.reserved, journal);
    }
    return free;
  }

  /** Accounts whose lease has free funds and nobody drew on it for `idleMs`. */
  idleAccounts(idleMs = LEASE_IDLE_MS): string[] {
    const before = this.now() - idleMs;
    return [...this.#leases]
      .filter(([, lease]) => (lease.open || lease.reserved > lease.drawn) && lease.lastDrawAt <= before)
      .map(([userId]) => userId);
  }

  /**
   * Forgets every lease without writing: the database no longer has them (another instance
   * took this one for dead and dropped them). Holds are decided in the database again.
   */
  forgetAll(): void {
    this.#leases.clear();
  }

  #shrink(sql: SyncSql, userId: string, lease: Lease, amount: number, journal: Journal): void {
    lease.reserved -= amount;
    journal.push(() => (lease.reserved += amount));
    this.#writeShrink(sql, userId, lease, amount, journal);
  }

  /** Writes a shrink by `amount` that `lease` (in memory) already has; deletes the row and forgets the lease when nothing is left. */
  #writeShrink(sql: SyncSql, userId: string, lease: Lease, amount: number, journal: Journal): void {
    if (lease.reserved > 0 || lease.drawn > 0) {
      sql.run(SHRINK_LEASE, [amount, this.now(), userId, this.instanceId()]);
      return;
    }
    sql.run(DELETE_LEASE, [userId, this.instanceId()]);
    this.#leases.delete(userId);
    journal.push(() => this.#leases.set(userId, lease));
  }

  #forgetIfEmpty(userId: string, lease: Lease): void {
    if (lease.reserved === 0 && lease.drawn === 0 && this.#leases.get(userId) === lease) this.#leases.delete(userId);
  }
}
