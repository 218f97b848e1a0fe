import * as v from "valibot";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { DEFAULT_SETTINGS, SettingsSchema, type Settings } from "./settings-schema.ts";

const SETTINGS_KEY = "settings";

/** Settings served from memory; reloaded when this or another instance changes them. */
export class SettingsStore {
  #current: Settings = DEFAULT_SETTINGS;

  constructor(private readonly db: Kysely<Database>) {}

  /** The settings in force. */
  get current(): Settings {
    return this.#current;
  }

  /** Reads the stored settings; a missing or unreadable row means the defaults. */
  async load(): Promise<void> {
    this.#current = await readStored(this.db);
  }

  /**
   * Stores `change` applied to the settings as stored, read in `trx` (a write transaction):
   * not to those in memory, which miss what another instance wrote since its last reload, or
   * a concurrent change on this one still committing; either would be undone. Served from the
   * next `load`.
   */
  async update(trx: Kysely<Database>, change: (stored: Settings) => Settings): Promise<void> {
    await this.#save(trx, change(await readStored(trx)));
  }

  async #save(trx: Kysely<Database>, next: Settings): Promise<void> {
    const value_json = JSON.stringify(next);
    await trx
      .insertInto("settings")
      .values({ key: SETTINGS_KEY, value_json })
      .onConflict((oc) => oc.column("key").doUpdateSet({ value_json }))
      .execute();
  }
}

/** The settings stored in `db`; a missing or unreadable row means the defaults. */
async function readStored(db: Kysely<Database>): Promise<Settings> {
  const row = await db.selectFrom("settings").select("value_json").where("key", "=", SETTINGS_KEY).executeTakeFirst();
  if (!row) return DEFAULT_SETTINGS;
  const parsed = v.safeParse(SettingsSchema, { ...DEFAULT_SETTINGS, ...JSON.parse(row.value_json) });
  return parsed.success ? parsed.output : DEFAULT_SETTINGS;
}
