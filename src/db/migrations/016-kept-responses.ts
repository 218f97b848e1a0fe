import { sql, type Kysely } from "kysely";
import type { Migration } from "./index.ts";

/**
 * The Responses the gateway keeps (src/state/kept-responses.ts), in the database so that every
 * instance sharing it, and the next start, can continue, refer to, retrieve and delete them.
 * One row per Response, its JSON last so that the checks on owner and expiry read no overflow
 * page. Its output items are found through a table of their ids, one row per item: a Response
 * may have many of them, which no indexed column could hold, and the item's text stays once,
 * in the Response. The total size kept is one row kept by triggers, so the bound on it costs
 * a keep one read rather than a sum over every row; deleting a Response (by DELETE, expiry or
 * the bound) deletes its items by the same trigger.
 */
export const keptResponses: Migration = {
  id: "016-kept-responses",
  async up(db: Kysely<unknown>) {
    const statements = [
      sql`create table kept_responses (
        id text primary key, user_id text not null, created_at integer not null, expires_at integer not null,
        bytes integer not null, kept_json text not null
      )`,
      // Expiry and the bound both take the oldest first: one index serves the sweep and the drop.
      sql`create index kept_responses_expires on kept_responses (expires_at)`,
      sql`create table kept_response_items (item_id text primary key, response_id text not null) without rowid`,
      sql`create index kept_response_items_response on kept_response_items (response_id)`,
      sql`create table kept_responses_total (id integer primary key check (id = 1), bytes integer not null)`,
      sql`insert into kept_responses_total (id, bytes) values (1, 0)`,
      sql`create trigger kept_responses_insert after insert on kept_responses begin
        update kept_responses_total set bytes = bytes + new.bytes where id = 1;
      end`,
      sql`create trigger kept_responses_delete after delete on kept_responses begin
        update kept_responses_total set bytes = bytes - old.bytes where id = 1;
        delete from kept_response_items where response_id = old.id;
      end`,
    ];
    for (const statement of statements) await statement.execute(db);
  },
};
