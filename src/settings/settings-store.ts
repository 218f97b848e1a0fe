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
    const row = await this.db.selectFrom("settings").select("value_json").where("key", "=", SETTINGS_KEY).executeTakeFirst();
    if (!row) {
      this.#current = DEFAULT_SETTINGS;
      return;
    }
    const parsed = v.safeParse(SettingsSchema, { ...DEFAULT_SETTINGS, ...JSON.parse(row.value_json) });
    this.#current = parsed.success ? parsed.output : DEFAULT_SETTINGS;
  }

  /** Stores new settings; served from the next `load`. */
  async save(trx: Kysely<Database>, next: Settings): Promise<void> {
    const value_json = JSON.stringify(next);
    await trx
      .insertInto("settings")
      .values({ key: SETTINGS_KEY, value_json })
      .onConflict((oc) => oc.column("key").doUpdateSet({ value_json }))
      .execute();
  }
}
