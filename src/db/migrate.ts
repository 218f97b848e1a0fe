import { sql, type Kysely } from "kysely";
import type { Database } from "./schema.ts";
import { MIGRATIONS, type Migration } from "./migrations/index.ts";

/**
 * Applies the migrations not yet recorded, each in its own transaction, and refuses to
 * run against a database that a newer gateway has migrated (it would misread the schema).
 */
export async function migrate(
  db: Kysely<Database>,
  now: () => number,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<string[]> {
  await sql`create table if not exists schema_migrations (id text primary key, applied_at integer not null)`.execute(db);
  const applied = new Set((await db.selectFrom("schema_migrations").select("id").execute()).map((r) => r.id));
  const known = new Set(migrations.map((m) => m.id));
  const unknown = [...applied].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new Error(
      `the database was migrated by a newer gateway (unknown migrations: ${unknown.join(", ")}); ` +
        "upgrade this executable or point DATABASE_URL at another database",
    );
  }
  const ran: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    await db.transaction().execute(async (trx) => {
      // Re-checked inside the write transaction: another instance may have just applied it.
      const already = await trx.selectFrom("schema_migrations").select("id").where("id", "=", migration.id).executeTakeFirst();
      if (already) return;
      // Migrations see an untyped database: they describe the schema these types come from.
      await migration.up(trx as unknown as Kysely<unknown>);
      await trx.insertInto("schema_migrations").values({ id: migration.id, applied_at: now() }).execute();
      ran.push(migration.id);
    });
  }
  return ran;
}
