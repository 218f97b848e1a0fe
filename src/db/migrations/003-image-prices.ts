import type { Kysely } from "kysely";
import type { Migration } from "./index.ts";

/** Per-image prices by size and quality, as a JSON object of micro-USD ("1024x1024/hd": 80000). */
export const imagePrices: Migration = {
  id: "003-image-prices",
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("prices").addColumn("image_prices_json", "text").execute();
  },
};
