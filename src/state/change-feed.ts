import { sql, type CompiledQuery, type Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";

/** Moved by every admin write. */
const CACHE_EPOCH = "cache_epoch";
/** Moved when an instance registers, retires or is found dead. */
const INSTANCES_EPOCH = "instances_epoch";
/**
 * Change rows kept: an instance that falls further behind than this between two polls finds
 * some missing and reloads everything, as it does for a counter moved without a row.
 */
const KEPT_CHANGES = 1_000;

/**
 * What one admin write changed, so instances reload that alone: a channel, a token (its
 * key), a user (their keys), a model's price, the settings, or `all` for a write of many rows.
 */
export type Change =
  | { kind: "channel" | "token" | "user" | "price"; subject: string }
  | { kind: "settings" | "all" };

/** The counter's value after the bump. */
async function bumpCounter(db: Kysely<Database>, key: string): Promise<number> {
  const { rows } = await sql<{ value: number }>`insert into settings (key, value_json) values (${key}, '1')
    on conflict (key) do update set value_json = cast(value_json as integer) + 1
    returning cast(value_json as integer) as value`.execute(db);
  return rows[0]!.value;
}

/** Bumps the change counter without naming a change, so every instance reloads everything. */
export async function announceChange(db: Kysely<Database>): Promise<void> {
  await bumpCounter(db, CACHE_EPOCH);
}

/** Bumps the instances counter, so every instance counts the others again. */
export async function announceInstancesChanged(db: Kysely<Database>): Promise<void> {
  await bumpCounter(db, INSTANCES_EPOCH);
}

/** What the feed tells the instance; each returns once it has acted. */
export interface ChangeListeners {
  /** Admin data changed, and what changed is not known: reload keys, channels, prices and settings. */
  reload(): Promise<void>;
  /** These admin changes were made (oldest first): reload what they name. */
  changed(changes: readonly Change[]): Promise<void>;
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
 * counter and records what it changed under the counter's new value; an instance that
 * starts, stops or is found dead bumps another. Every instance polls both counters (one tiny
 * read per interval); when the first moved it reloads the channels, prices, keys or settings
 * the new change rows name, or everything when some are missing; when the second moved it
 * counts the other instances again.
 */
export class ChangeFeed {
  #seen: Epochs = { cache: -1, instances: -1 };
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;
  /** Catch-ups run one after another: one that read a row before a later change must not apply it after. */
  #catchingUp: Promise<void> = Promise.resolve();

  /**
   * The counters' read, compiled once: it runs every poll, for the life of an idle gateway,
   * and building and compiling it each time made Kysely's compiler hot enough for the JIT to
   * compile it (a few MB of idle RSS within a minute of start).
   */
  readonly #readEpochs: CompiledQuery<{ key: string; value_json: string }>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly listeners: ChangeListeners,
  ) {
    this.#readEpochs = db.selectFrom("settings").select(["key", "value_json"]).where("key", "in", [CACHE_EPOCH, INSTANCES_EPOCH]).compile();
  }

  /**
   * Runs an admin write, moves the change counter and records `change` (or what it makes of
   * the write's result) in one write transaction, then brings this instance up to date. Other
   * instances reload only when the counter moves: a write committed without it (the process
   * killed between the two, or the counter's write failing) was served by no instance but
   * those that started after it, and a revoked key kept working.
   */
  async commit<T>(change: Change | ((written: T) => Change), write: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    const result = await writeTransaction(this.db, async (trx) => {
      const written = await write(trx);
      const named = typeof change === "function" ? change(written) : change;
      const seq = await bumpCounter(trx, CACHE_EPOCH);
      await trx.insertInto("admin_changes").values({ seq, kind: named.kind, subject: "subject" in named ? named.subject : "" }).execute();
      await trx.deleteFrom("admin_changes").where("seq", "<=", seq - KEPT_CHANGES).execute();
      return written;
    });
    await this.#catchUp();
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
    if (epochs.cache !== this.#seen.cache) await this.#catchUp();
  }

  #catchUp(): Promise<void> {
    const run = this.#catchingUp.then(() => this.#applyNewChanges());
    this.#catchingUp = run.catch(() => {});
    return run;
  }

  /**
   * Applies the changes after the last one seen. The counter is read first: a change
   * committed meanwhile has a later number, and is left for the next catch-up.
   */
  async #applyNewChanges(): Promise<void> {
    const { cache } = await this.#read();
    const seen = this.#seen.cache;
    if (cache === seen) return;
    const rows = await this.db
      .selectFrom("admin_changes")
      .select(["kind", "subject"])
      .where("seq", ">", seen)
      .where("seq", "<=", cache)
      .orderBy("seq")
      .execute();
    // Fewer rows than the counter moved: some were pruned or never written (the first start's
    // keys); what they changed is unknown.
    if (rows.length === cache - seen) await this.listeners.changed(rows as Change[]);
    else await this.listeners.reload();
    this.#seen.cache = cache;
  }

  async #read(): Promise<Epochs> {
    const { rows } = await this.db.executeQuery(this.#readEpochs);
    const epochs: Epochs = { cache: 0, instances: 0 };
    for (const row of rows) epochs[row.key === CACHE_EPOCH ? "cache" : "instances"] = Number(row.value_json);
    return epochs;
  }
}
