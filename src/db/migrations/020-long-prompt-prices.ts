import type { Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * A price's long-prompt tier: the threshold and the token prices above it, as one JSON object
 * (micro-USD), since they mean nothing apart and most models have none. Null: one rate for
 * any prompt length, which every price stored before had.
 */
export const longPromptPrices: Migration = {
  id: "020-long-prompt-prices",
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("prices").addColumn("long_prompt_json", "text").execute();
  },
};
