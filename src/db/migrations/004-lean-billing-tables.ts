import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Fewer pages written per billed request: a hold and its settlement wrote about 18 pages
 * between them, and each page written costs as much as the rest of a small transaction.
 * - `holds` becomes a WITHOUT ROWID table: its key is its only index. It holds only the
 *   requests in flight, so the index on `instance_id` (read once at start) goes.
 * - `ledger` loses AUTOINCREMENT, which updated sqlite_sequence on every insert. Ledger rows
 *   are never deleted, so a plain INTEGER PRIMARY KEY hands out the same increasing ids.
 * - `ledger_reference` goes: no query reads the ledger by reference.
 */
export const leanBillingTables: Migration = {
  id: "004-lean-billing-tables",
  async up(db: Kysely<unknown>) {
    const statements = [
      sql`drop index holds_instance_id`,
      sql`create table holds_new (
        id text primary key, user_id text not null, amount_micros integer not null,
        instance_id text not null, created_at integer not null
      ) without rowid`,
      sql`insert into holds_new (id, user_id, amount_micros, instance_id, created_at)
        select id, user_id, amount_micros, instance_id, created_at from holds`,
      sql`drop table holds`,
      sql`alter table holds_new rename to holds`,

      sql`drop index ledger_reference`,
      sql`drop index ledger_user_id`,
      sql`create table ledger_new (
        id integer primary key, user_id text not null references users(id), kind text not null,
        amount_micros integer not null, balance_after_micros integer not null, reference text,
        created_at integer not null
      )`,
      sql`insert into ledger_new (id, user_id, kind, amount_micros, balance_after_micros, reference, created_at)
        select id, user_id, kind, amount_micros, balance_after_micros, reference, created_at from ledger`,
      sql`drop table ledger`,
      sql`alter table ledger_new rename to ledger`,
      sql`create index ledger_user_id on ledger (user_id)`,
    ];
    for (const statement of statements) await statement.execute(db);
  },
};
