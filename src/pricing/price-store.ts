import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { DEFAULT_PRICES } from "./default-prices.ts";
import { priceFromRow, priceToRow, type Price } from "./price.ts";

/** Prices in memory: the shipped table overlaid with admin-set rows; reloaded on change. */
export class PriceStore {
  #byModel = new Map<string, Price>();

  constructor(private readonly db: Kysely<Database>) {}

  /** Rebuilds the table from the shipped defaults and the stored rows. */
  async load(): Promise<void> {
    const byModel = new Map(DEFAULT_PRICES.map((p) => [p.model, p]));
    for (const row of await this.db.selectFrom("prices").selectAll().execute()) {
      byModel.set(row.model, priceFromRow(row));
    }
    this.#byModel = byModel;
  }

  /** Reads these models' stored prices again (one removed falls back to the shipped price, if any). */
  async reload(models: readonly string[]): Promise<void> {
    const rows = await this.db.selectFrom("prices").selectAll().where("model", "in", models).execute();
    const byModel = new Map(this.#byModel);
    for (const model of models) {
      const shipped = DEFAULT_PRICES.find((p) => p.model === model);
      if (shipped) byModel.set(model, shipped);
      else byModel.delete(model);
    }
    for (const row of rows) byModel.set(row.model, priceFromRow(row));
    this.#byModel = byModel;
  }

  /** The price of a model, if it has one. */
  get(model: string): Price | undefined {
    return this.#byModel.get(model);
  }

  /** Every priced model, sorted by ID. */
  list(): Price[] {
    return [...this.#byModel.values()].sort((a, b) => a.model.localeCompare(b.model));
  }

  /** Stores a model's price, replacing the previous one; served from the next `load`. */
  async set(trx: Kysely<Database>, price: Price, now: number): Promise<void> {
    const row = priceToRow(price, now);
    await trx
      .insertInto("prices")
      .values(row)
      .onConflict((oc) => oc.column("model").doUpdateSet(row))
      .execute();
  }
}
