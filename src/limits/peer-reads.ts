import type { RateWindowsTable } from "../db/schema.ts";

/** The latest updated_at of each instance among `rows`. */
export function latestOf(rows: readonly Pick<RateWindowsTable, "instance_id" | "updated_at">[]): Map<string, number> {
  const latest = new Map<string, number>();
  for (const row of rows) latest.set(row.instance_id, Math.max(latest.get(row.instance_id) ?? row.updated_at, row.updated_at));
  return latest;
}

/** How far an instance's rows were read: the updated_at up to which a read found them all, and when (this instance's clock). */
interface ReadUpTo {
  updatedAt: number;
  readAt: number;
}

/**
 * How far this instance has read each other instance's rows of rate_windows, so that each read
 * takes only the rows changed since: a row is the whole of its writer's windows of a bucket, so
 * one not rewritten since it was read tells nothing new.
 */
export class PeerReads {
  #instances = new Map<string, ReadUpTo>();

  constructor(
    /** An instance whose rows were not read for this long (it wrote none) is forgotten: it is gone, and its windows have aged out. */
    private readonly forgetAfterMs: number,
  ) {}

  /** For each instance read before, the updated_at from which its rows are unread (see readUpTo). */
  readFrom(): Map<string, number> {
    const from = new Map<string, number>();
    for (const [instance, upTo] of this.#instances) from.set(instance, upTo.updatedAt + 1);
    return from;
  }

  /**
   * Notes that a read, done at `now`, found every row of each instance in `latest` written up
   * to the time given for it: its next read skips them. Each write transaction of an instance
   * has a time of its own, later than its last one's (RateExchange), so a row not found was
   * not yet committed, and will carry a later time. Instances not read for a while are forgotten.
   */
  readUpTo(latest: ReadonlyMap<string, number>, now: number): void {
    for (const [instance, updatedAt] of latest) this.#instances.set(instance, { updatedAt, readAt: now });
    for (const [instance, upTo] of this.#instances) if (upTo.readAt < now - this.forgetAfterMs) this.#instances.delete(instance);
  }

  /** Forgets everything read: the rows read next are all new. */
  clear(): void {
    this.#instances.clear();
  }

  /** How many instances are remembered; for tests. */
  get size(): number {
    return this.#instances.size;
  }
}
