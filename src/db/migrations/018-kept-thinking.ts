import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * Anthropic thinking kept for the turn that answers its tool calls (src/state/kept-thinking.ts),
 * in the database so that the instance serving that turn, whichever it is, finds it. One row per
 * answer that called tools, under its first tool call's id; the blocks' JSON last, so the checks
 * on owner and expiry read no overflow page. A rowid table: a row can be large, and the primary
 * key's own index keeps the lookups by id short.
 */
export const keptThinking: Migration = {
  id: "018-kept-thinking",
  async up(db: Kysely<unknown>) {
    await sql`create table kept_thinking (
      tool_call_id text primary key, user_id text not null, expires_at integer not null, blocks_json text not null
    )`.execute(db);
    await sql`create index kept_thinking_expires on kept_thinking (expires_at)`.execute(db);
  },
};
