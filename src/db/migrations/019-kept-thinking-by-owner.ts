import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Kept thinking (018) is keyed by its owner and the tool call id together: a call id is the
 * upstream's, and two accounts whose upstreams made the same one overwrote each other's row,
 * the second answer's thinking replacing the first's. The rows kept are carried over (the
 * old key held each id once); the table stays a rowid table, as 018 explains.
 */
export const keptThinkingByOwner: Migration = {
  id: "019-kept-thinking-by-owner",
  async up(db: Kysely<unknown>) {
    const statements = [
      sql`create table kept_thinking_new (
        user_id text not null, tool_call_id text not null, expires_at integer not null, blocks_json text not null,
        primary key (user_id, tool_call_id)
      )`,
      sql`insert into kept_thinking_new select user_id, tool_call_id, expires_at, blocks_json from kept_thinking`,
      sql`drop table kept_thinking`,
      sql`alter table kept_thinking_new rename to kept_thinking`,
      sql`create index kept_thinking_expires on kept_thinking (expires_at)`,
    ];
    for (const statement of statements) await statement.execute(db);
  },
};
