import type { Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Funds held for requests in flight, and the instances that hold them, so a hold left by a
 * crashed instance can be found and released.
 */
export const holds: Migration = {
  id: "002-holds",
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("instances")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("host", "text", (c) => c.notNull())
      .addColumn("pid", "integer", (c) => c.notNull())
      .addColumn("started_at", "integer", (c) => c.notNull())
      .addColumn("heartbeat_at", "integer", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("holds")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("amount_micros", "integer", (c) => c.notNull())
      .addColumn("instance_id", "text", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("holds_instance_id").on("holds").column("instance_id").execute();
    await db.schema.createIndex("ledger_reference").on("ledger").column("reference").execute();
  },
};
