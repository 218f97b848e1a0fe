import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Two fewer index pages written per billed request (12 -> 8 for a hold and its settlement).
 * - `usage_logs` is keyed by (created_at, id) in a WITHOUT ROWID table: the admin listing's
 *   order (newest first) and its date filter read the key itself, so the rowid b-tree, the
 *   autoindex on `id` and the `created_at` index (three pages per insert) become one.
 *   `id` stays unique by construction (newId: clock plus 72 random bits).
 * - `ledger_user_id` goes: the ledger is written twice per request and read only by the
 *   doctor, which now sums every account in one grouped pass over the table.
 */
export const clusteredUsageLog: Migration = {
  id: "005-clustered-usage-log",
  async up(db: Kysely<unknown>) {
    const statements = [
      sql`drop index ledger_user_id`,
      sql`create table usage_logs_new (
        id text not null, request_id text not null, user_id text not null, token_id text not null,
        model text not null, endpoint text not null, prompt_tokens integer not null,
        completion_tokens integer not null, cost_micros integer not null, status integer not null,
        latency_ms integer not null, channel_id text, stream integer not null, created_at integer not null,
        primary key (created_at, id)
      ) without rowid`,
      sql`insert into usage_logs_new
        select id, request_id, user_id, token_id, model, endpoint, prompt_tokens, completion_tokens,
          cost_micros, status, latency_ms, channel_id, stream, created_at from usage_logs`,
      sql`drop table usage_logs`,
      sql`alter table usage_logs_new rename to usage_logs`,
      sql`create index usage_logs_user_created on usage_logs (user_id, created_at)`,
    ];
    for (const statement of statements) await statement.execute(db);
  },
};
