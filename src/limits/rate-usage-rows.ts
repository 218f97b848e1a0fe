import { sql, type Kysely } from "kysely";
import type { Database, RateUsageTable } from "../db/schema.ts";
import type { PublishedBucket } from "./rate-limiter.ts";

/** The statements of the rate-limit exchange on rate_usage (migrations 007 and 008). */

/**
 * Adds what `instanceId` admitted to its rows, one row per bucket, and sets their limits and
 * levels, all at `at`. One statement: a caller writes at most a few hundred rows at a time
 * (9 parameters each, well under SQLite's limit on parameters).
 */
export async function upsertRateUsage(db: Kysely<Database>, instanceId: string, buckets: readonly PublishedBucket[], at: number): Promise<void> {
  if (buckets.length === 0) return;
  const rows = buckets.map((bucket) => ({
    instance_id: instanceId,
    bucket: bucket.bucket,
    requests: bucket.requests,
    tokens: bucket.tokens,
    requests_per_minute: bucket.requestsPerMinute,
    tokens_per_minute: bucket.tokensPerMinute,
    updated_at: at,
    requests_level: bucket.requestsLevel,
    tokens_level: bucket.tokensLevel,
  }));
  await db
    .insertInto("rate_usage")
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(["instance_id", "bucket"]).doUpdateSet((eb) => ({
        requests: eb("rate_usage.requests", "+", eb.ref("excluded.requests")),
        tokens: eb("rate_usage.tokens", "+", eb.ref("excluded.tokens")),
        requests_per_minute: eb.ref("excluded.requests_per_minute"),
        tokens_per_minute: eb.ref("excluded.tokens_per_minute"),
        updated_at: eb.ref("excluded.updated_at"),
        requests_level: eb.ref("excluded.requests_level"),
        tokens_level: eb.ref("excluded.tokens_level"),
      })),
    )
    .execute();
}

/** Deletes the rows of `instanceId` not updated since `before`. */
export async function pruneRateUsage(db: Kysely<Database>, instanceId: string, before: number): Promise<void> {
  await db.deleteFrom("rate_usage").where("instance_id", "=", instanceId).where("updated_at", "<", before).execute();
}

/**
 * The latest updated_at of each other instance's rows. Read before the pages of a read
 * (readChangedPage): every row of an instance at or before its time was committed by then, so
 * those pages find it, or a later state of it.
 */
export async function latestWrites(db: Kysely<Database>, instanceId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("rate_usage")
    .select((eb) => ["instance_id", eb.fn.max("updated_at").as("latest")])
    .where("instance_id", "!=", instanceId)
    .groupBy("instance_id")
    .execute();
  return new Map(rows.map((row) => [row.instance_id, Number(row.latest)]));
}

/** Where a page of rows ends, in key order. */
export type RowKey = Pick<RateUsageTable, "instance_id" | "bucket">;

/**
 * Up to `limit` of the other instances' rows that changed since they were last read, in key
 * order after `after`: those of each instance in `readFrom` updated at or after the time given
 * for it, and every row of any other instance.
 */
export function readChangedPage(
  db: Kysely<Database>,
  instanceId: string,
  readFrom: ReadonlyMap<string, number>,
  after: RowKey | null,
  limit: number,
): Promise<RateUsageTable[]> {
  const thresholds = [...readFrom].map(([id, at]) => sql`when ${id} then ${at}`);
  const since = thresholds.length === 0 ? sql<number>`0` : sql<number>`case instance_id ${sql.join(thresholds, sql` `)} else 0 end`;
  let query = db.selectFrom("rate_usage").selectAll().where("instance_id", "!=", instanceId).where("updated_at", ">=", since);
  if (after) query = query.where((eb) => eb(eb.refTuple("instance_id", "bucket"), ">", eb.tuple(after.instance_id, after.bucket)));
  return query.orderBy("instance_id").orderBy("bucket").limit(limit).execute();
}

/** Every row updated at or after `since`, whichever instance wrote it. */
export function readRowsSince(db: Kysely<Database>, since: number): Promise<RateUsageTable[]> {
  return db.selectFrom("rate_usage").selectAll().where("updated_at", ">=", since).execute();
}
