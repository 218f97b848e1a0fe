import type { Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * The price of the searches a model's server-side web search tool runs (micro-USD per 1,000
 * searches): Anthropic bills 10 USD per 1,000 on top of the tokens. Null: searches are free.
 */
export const webSearchPrices: Migration = {
  id: "010-web-search-prices",
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("prices").addColumn("per_1k_web_searches_micros", "integer").execute();
  },
};
