import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";

/** Moved by every admin write. */
const CACHE_EPOCH = "cache_epoch";
/** Moved when an instance registers, retires or is found dead. */
const INSTANCES_EPOCH = "instances_epoch";

async function bumpCounter(db: Kysely<Database>, key: string): Promise<void> {
  await sql`insert into settings (key, value_json) values (${key}, '1')
    on conflict (key) do update set value_json = cast(value_json as integer) + 1`.execute(db);
}

/** Bumps the change counter, so every instance reloads its in-memory state. */
export function announceChange(db: Kysely<Database>): Promise<void> {
  return bumpCounter(db, CACHE_EPOCH);
}

/** Bumps the instances counter, so every instance counts the others again. */
export function announceInstancesChanged(db: Kysely<Database>): Promise<void> {
  return bumpCounter(db, INSTANCES_EPOCH);
}

/** What the feed tells the instance; each returns once it has acted. */
export interface ChangeListeners {
  /** Admin data changed: reload keys, channels, prices and settings. */
  reload(): Promise<void>;
  /** An instance started, stopped or was found dead. */
  instancesChanged(): Promise<void>;
  /** After every poll, whatever it found: work that keeps the same cadence (the rate-limit exchange). */
  afterPoll(): Promise<void>;
}

interface Epochs {
  cache: number;
  instances: number;
}

/**
 * Tells instances sharing a database what the others changed. Each admin write bumps one
 * counter, and an instance that starts, stops or is found dead bumps another; every instance
 * polls both (one tiny read per interval) and reloads its in-memory keys, channels, prices and
 * settings, or counts the other instances again, when one moved.
 */
export class ChangeFeed {
  #seen: Epochs = { cache: -1, instances: -1 };
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly listeners: ChangeListeners,
  ) {}

  /**
   * Runs an admin write and moves the change counter in one write transaction, then reloads
   * this instance. Other instances reload only when the counter moves: a write committed
   * without it (the process killed between the two, or the counter's write failing) was
   * served by no instance but those that started after it, and a revoked key kept working.
   */
  async commit<T>(write: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    const result = await writeTransaction(this.db, async (trx) => {
      const written = await write(trx);
      await announceChange(trx);
      return written;
    });
    this.#seen.cache = (await this.#read()).cache;
    await this.listeners.reload();
    return result;
  }

  /** Starts polling every `intervalMs`. */
  start(intervalMs: number): void {
    this.#timer = setInterval(() => void this.#poll(), intervalMs);
    // Polling must not keep a draining process alive.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Reads the current counters as the baseline. */
  async init(): Promise<void> {
    this.#seen = await this.#read();
  }

  async #poll(): Promise<void> {
    // A poll held up by a busy database is not joined by the next ones.
    if (this.#polling) return;
    this.#polling = true;
    try {
      await this.#check().catch(() => {});
      await this.listeners.afterPoll().catch(() => {});
    } finally {
      this.#polling = false;
    }
  }

  async #check(): Promise<void> {
    const epochs = await this.#read();
    if (epochs.instances !== this.#seen.instances) {
      this.#seen.instances = epochs.instances;
      await this.listeners.instancesChanged();
    }
    if (epochs.cache !== this.#seen.cache) {
      this.#seen.cache = epochs.cache;
      await this.listeners.reload();
    }
  }

  async #read(): Promise<Epochs> {
    const rows = await this.db.selectFrom("settings").select(["key", "value_json"]).where("key", "in", [CACHE_EPOCH, INSTANCES_EPOCH]).execute();
    const epochs: Epochs = { cache: 0, instances: 0 };
    for (const row of rows) epochs[row.key === CACHE_EPOCH ? "cache" : "instances"] = Number(row.value_json);
    return epochs;
  }
}
