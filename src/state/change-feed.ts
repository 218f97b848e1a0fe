import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

const EPOCH_KEY = "cache_epoch";

/** Bumps the change counter, so every instance reloads its in-memory state. */
export async function announceChange(db: Kysely<Database>): Promise<void> {
  await sql`insert into settings (key, value_json) values (${EPOCH_KEY}, '1')
    on conflict (key) do update set value_json = cast(value_json as integer) + 1`.execute(db);
}

/**
 * Tells instances sharing a database that admin data changed. Each admin write bumps a
 * counter; every instance polls it (one tiny read per interval) and reloads its in-memory
 * keys, channels, prices and settings when it moved.
 */
export class ChangeFeed {
  #seen = -1;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly reload: () => Promise<void>,
  ) {}

  /** Records a change made by this instance and reloads now. */
  async bump(): Promise<void> {
    await announceChange(this.db);
    this.#seen = await this.#read();
    await this.reload();
  }

  /** Starts polling every `intervalMs`. */
  start(intervalMs: number): void {
    this.#timer = setInterval(() => {
      this.#check().catch(() => {});
    }, intervalMs);
    // Polling must not keep a draining process alive.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Reads the current counter as the baseline. */
  async init(): Promise<void> {
    this.#seen = await this.#read();
  }

  async #check(): Promise<void> {
    const epoch = await this.#read();
    if (epoch === this.#seen) return;
    this.#seen = epoch;
    await this.reload();
  }

  async #read(): Promise<number> {
    const row = await this.db.selectFrom("settings").select("value_json").where("key", "=", EPOCH_KEY).executeTakeFirst();
    return row ? Number(row.value_json) : 0;
  }
}
