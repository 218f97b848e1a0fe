import type { Kysely } from "kysely";
import type { Migration } from "./index.ts";

/** The first schema: accounts, keys, channels, prices, money and request logs. */
export const initial: Migration = {
  id: "001-initial",
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("email", "text", (c) => c.notNull().unique())
      .addColumn("plan", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("balance_micros", "integer", (c) => c.notNull())
      .addColumn("total_spent_micros", "integer", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .addColumn("updated_at", "integer", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("key_prefix", "text", (c) => c.notNull())
      .addColumn("permissions_json", "text", (c) => c.notNull())
      .addColumn("models_json", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("expires_at", "integer")
      .addColumn("created_at", "integer", (c) => c.notNull())
      .addColumn("last_used", "integer")
      .addColumn("requests_per_minute", "integer")
      .addColumn("tokens_per_minute", "integer")
      .execute();
    await db.schema.createIndex("tokens_user_id").on("tokens").column("user_id").execute();

    await db.schema
      .createTable("channels")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("base_url", "text")
      .addColumn("api_key", "text")
      .addColumn("models_json", "text", (c) => c.notNull())
      .addColumn("model_map_json", "text", (c) => c.notNull())
      .addColumn("priority", "integer", (c) => c.notNull())
      .addColumn("weight", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .addColumn("updated_at", "integer", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("prices")
      .addColumn("model", "text", (c) => c.primaryKey())
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("input_per_million_micros", "integer")
      .addColumn("output_per_million_micros", "integer")
      .addColumn("cached_input_per_million_micros", "integer")
      .addColumn("per_image_micros", "integer")
      .addColumn("per_1k_characters_micros", "integer")
      .addColumn("per_minute_micros", "integer")
      .addColumn("per_1k_documents_micros", "integer")
      .addColumn("updated_at", "integer", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("ledger")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("amount_micros", "integer", (c) => c.notNull())
      .addColumn("balance_after_micros", "integer", (c) => c.notNull())
      .addColumn("reference", "text")
      .addColumn("created_at", "integer", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("ledger_user_id").on("ledger").column("user_id").execute();

    await db.schema
      .createTable("usage_logs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("request_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("token_id", "text", (c) => c.notNull())
      .addColumn("model", "text", (c) => c.notNull())
      .addColumn("endpoint", "text", (c) => c.notNull())
      .addColumn("prompt_tokens", "integer", (c) => c.notNull())
      .addColumn("completion_tokens", "integer", (c) => c.notNull())
      .addColumn("cost_micros", "integer", (c) => c.notNull())
      .addColumn("status", "integer", (c) => c.notNull())
      .addColumn("latency_ms", "integer", (c) => c.notNull())
      .addColumn("channel_id", "text")
      .addColumn("stream", "integer", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("usage_logs_created_at").on("usage_logs").column("created_at").execute();
    await db.schema
      .createIndex("usage_logs_user_created")
      .on("usage_logs")
      .columns(["user_id", "created_at"])
      .execute();

    await db.schema
      .createTable("settings")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("value_json", "text", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("idempotency_records")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("response_json", "text", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .execute();
  },
};
