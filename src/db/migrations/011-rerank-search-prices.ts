import type { Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * The per-search price of a rerank model (micro-USD per 1,000 searches): Cohere bills its
 * rerank models by the search, a query with up to 100 documents. Null: not priced by search.
 */
export const rerankSearchPrices: Migration = {
  id: "011-rerank-search-prices",
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("prices").addColumn("per_1k_searches_micros", "integer").execute();
  },
};
