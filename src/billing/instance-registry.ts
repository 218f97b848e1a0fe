import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";
import { newId } from "../lib/random-id.ts";
import { announceInstancesChanged } from "../state/change-feed.ts";
import type { DatabaseWritable } from "../db/database-writable.ts";

/** What the runtime tells about this process, to recognise crashed siblings on one host. */
export interface ProcessIdentity {
  host: string;
  pid: number;
  /** Whether a process of this host is alive; null when the runtime cannot tell. */
  isAlive(pid: number): boolean | null;
}

/** What an instance's registry tells, and the clock it times others' heartbeats by. */
export interface RegistryHooks {
  /** Called when this instance finds that another one took it for dead. */
  onDeclaredDead?: () => void;
  /** Told whether each heartbeat, a write every 5 s, went through. */
  writable?: DatabaseWritable;
  /** This process's own clock (default: performance.now). */
  monotonicNow?: () => number;
}

/** An instance whose heartbeat has not moved for this long is taken for dead. */
const STALE_AFTER_MS = 15_000;

/** Another instance's heartbeat as last read, and when it was first read so, on this process's own clock. */
interface Watched {
  heartbeatAt: number;
  since: number;
}

/**
 * Registers this gateway process in the database with a heartbeat, and releases the holds and
 * balance leases of instances that died (killed, crashed): at start, and on every heartbeat
 * after it. On one
 * host a dead process is recognised at once by its pid; elsewhere by its stale heartbeat. It
 * also counts the other live instances, so that work only instances sharing a database need
 * (the rate-limit exchange) costs nothing to one alone.
 */
export class InstanceRegistry {
  readonly id = newId("inst");
  #peers = 0;
  readonly #watched = new Map<string, Watched>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly identity: ProcessIdentity,
    private readonly now: () => number,
    private readonly hooks: RegistryHooks = {},
  ) {}

  /** This process's own clock, which no step of the wall clock moves. */
  private monotonicNow(): number {
    return this.hooks.monotonicNow?.() ?? performance.now();
  }

  /**
   * Whether no other live instance shares the database, as last counted: at start, on every
   * heartbeat, and within one poll of the change feed after an instance registered or retired.
   */
  get alone(): boolean {
    return this.#peers === 0;
  }

  /** Records this instance as alive, and tells the others it is there. */
  register(): Promise<void> {
    return writeTransaction(this.db, (trx) => this.#insertRecord(trx));
  }

  /** Counts the other live instances again (the change feed saw one register, retire or die). */
  async countPeers(): Promise<void> {
    const others = await this.db.selectFrom("instances").select(["id", "host", "pid", "heartbeat_at"]).where("id", "!=", this.id).execute();
    this.#peers = others.filter((instance) => !this.#isDead(instance)).length;
  }

  /**
   * Refreshes this instance's heartbeat, then releases holds of dead instances. When this
   * instance's record is gone, another one took it for dead (its heartbeat was stale) and
   * dropped its leases: it registers again and `onDeclaredDead` forgets them in memory.
   */
  async heartbeat(): Promise<number> {
    try {
      await writeTransaction(this.db, async (trx) => {
        const updated = await trx.updateTable("instances").set({ heartbeat_at: this.now() }).where("id", "=", this.id).executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0) return;
        this.hooks.onDeclaredDead?.();
        await this.#insertRecord(trx);
      });
    } catch (error) {
      this.hooks.writable?.failed(error);
      throw error;
    }
    this.hooks.writable?.succeeded();
    return this.releaseOrphanedHolds();
  }

  /**
   * Refunds every hold of a dead instance in full, drops its leases and forgets the instance;
   * returns how many holds were refunded. Its rate-limit windows stay, to count for the rest
   * of their minute (RateExchange). A lease moved no money by itself: the holds drawn on it
   * reach the ledger only when their request finishes, which a dead instance's never will.
   * Everything is read inside the write transaction, so an instance that registers meanwhile
   * is never mistaken for an unknown, dead one.
   */
  async releaseOrphanedHolds(): Promise<number> {
    return writeTransaction(this.db, async (trx) => {
      const instances = await trx.selectFrom("instances").selectAll().where("id", "!=", this.id).execute();
      const orphanedBy = await trx
        .selectFrom("holds")
        .select("instance_id")
        .where("instance_id", "!=", this.id)
        .union(trx.selectFrom("balance_leases").select("instance_id").where("instance_id", "!=", this.id))
        .execute();
      const known = new Map(instances.map((i) => [i.id, i]));
      const dead = new Set<string>();
      for (const instance of instances) if (this.#isDead(instance)) dead.add(instance.id);
      // Instances gone from the table (retired, or dropped by another instance) or dropped here are watched no more.
      for (const id of this.#watched.keys()) if (!known.has(id) || dead.has(id)) this.#watched.delete(id);
      this.#peers = instances.length - dead.size;
      for (const { instance_id } of orphanedBy) if (!known.has(instance_id)) dead.add(instance_id);
      if (dead.size === 0) return 0;
      const holds = await trx.selectFrom("holds").selectAll().where("instance_id", "in", [...dead]).execute();
      const at = this.now();
      for (const hold of holds) {
        const user = await trx
          .updateTable("users")
          .set((eb) => ({ balance_micros: eb("balance_micros", "+", hold.amount_micros), updated_at: at }))
          .where("id", "=", hold.user_id)
          .returning("balance_micros")
          .executeTakeFirst();
        if (user) {
          await trx
            .insertInto("ledger")
            .values({ user_id: hold.user_id, kind: "refund", amount_micros: hold.amount_micros, balance_after_micros: user.balance_micros, reference: hold.id, created_at: at })
            .execute();
        }
        await trx.deleteFrom("holds").where("id", "=", hold.id).execute();
      }
      await trx.deleteFrom("balance_leases").where("instance_id", "in", [...dead]).execute();
      await trx.deleteFrom("instances").where("id", "in", [...dead]).execute();
      await announceInstancesChanged(trx);
      return holds.length;
    });
  }

  /**
   * Removes this instance's record at shutdown, after its leases were closed, and tells the
   * others it is gone. What requests still in flight hold (past the drain timeout) stays
   * reserved until another instance finds the record gone and drops it with the rest.
   */
  async retire(): Promise<void> {
    await writeTransaction(this.db, async (trx) => {
      await trx.deleteFrom("instances").where("id", "=", this.id).execute();
      await announceInstancesChanged(trx);
    });
  }

  async #insertRecord(trx: Kysely<Database>): Promise<void> {
    const at = this.now();
    await trx
      .insertInto("instances")
      .values({ id: this.id, host: this.identity.host, pid: this.identity.pid, started_at: at, heartbeat_at: at })
      .execute();
    await announceInstancesChanged(trx);
  }

  /**
   * Whether another instance is dead. On this host, a record with our own pid is a predecessor
   * (pids repeat, e.g. pid 1 in a container), and a pid that is not running is dead now,
   * whatever its heartbeat says. Else its heartbeat tells: on the first look (a start after a
   * crash) by its age on the wall clock; after it, by how long it has not moved on this
   * process's own clock. A wall-clock step (NTP, a VM resumed) ages or rejuvenates every
   * heartbeat at once: a minute's step forward made instances that were alive take each other
   * for dead and drop each other's holds and leases.
   */
  #isDead(instance: { id: string; host: string; pid: number; heartbeat_at: number }): boolean {
    if (instance.host === this.identity.host && (instance.pid === this.identity.pid || this.identity.isAlive(instance.pid) === false)) return true;
    const watched = this.#watched.get(instance.id);
    const now = this.monotonicNow();
    if (watched === undefined || watched.heartbeatAt !== instance.heartbeat_at) {
      this.#watched.set(instance.id, { heartbeatAt: instance.heartbeat_at, since: now });
      return watched === undefined && this.now() - instance.heartbeat_at > STALE_AFTER_MS;
    }
    return now - watched.since > STALE_AFTER_MS;
  }
}
