import { sql, type Kysely } from "kysely";
import type { Database, RateWindowsTable } from "../db/schema.ts";
import type { WindowEntries } from "./minute-window.ts";
import type { PublishedWindows } from "./rate-limiter.ts";

/** The statements of the rate-limit exchange on rate_windows (migration 017). */

/**
 * A row's `windows` column: the slots as offsets from `base`, the oldest slot of the two,
 * flat (offset, amount, offset, amount, ...). Small numbers in flat arrays: with 10,000 buckets
 * changed every poll, nested pairs of full slot numbers took three times as long to write and
 * read.
 */
interface WindowsColumn {
  base: number;
  requests: number[];
  tokens: number[];
}

function encode(requests: WindowEntries, tokens: WindowEntries): string {
  const base = Math.min(requests[0] ?? Number.POSITIVE_INFINITY, tokens[0] ?? Number.POSITIVE_INFINITY);
  const offsets = (entries: WindowEntries) => entries.map((number, index) => (index % 2 === 0 ? number - base : number));
  return JSON.stringify({ base: Number.isFinite(base) ? base : 0, requests: offsets(requests), tokens: offsets(tokens) } satisfies WindowsColumn);
}

/**
 * The entries of a column's flat list, or null when it is not one (a row damaged by hand). An
 * amount below zero is never written (a settlement takes back at most its reservation): read,
 * it would give its bucket room on every instance.
 */
function decodeEntries(base: unknown, numbers: unknown): number[] | null {
  if (typeof base !== "number" || !Array.isArray(numbers) || numbers.length % 2 !== 0) return null;
  const entries: number[] = new Array(numbers.length);
  for (let index = 0; index < numbers.length; index++) {
    const number: unknown = numbers[index];
    if (typeof number !== "number" || !Number.isFinite(number)) return null;
    const isSlot = index % 2 === 0;
    if (!isSlot && number < 0) return null;
    entries[index] = isSlot ? base + number : number;
  }
  return entries;
}

/**
 * A row's windows as published, or null when its text is not what this code writes (a row
 * damaged by hand): it is passed over rather than stopping every exchange after it.
 */
export function publishedOf(row: Pick<RateWindowsTable, "bucket" | "windows">): PublishedWindows | null {
  let column: Partial<WindowsColumn>;
  try {
    column = JSON.parse(row.windows) as Partial<WindowsColumn>;
  } catch {
    return null;
  }
  const requests = decodeEntries(column?.base, column?.requests);
  const tokens = decodeEntries(column?.base, column?.tokens);
  return requests && tokens ? { bucket: row.bucket, requests, tokens } : null;
}

/**
 * Writes `instanceId`'s windows of `buckets`, one row per bucket, all at `at`. One statement: a
 * caller writes at most a few hundred rows at a time (4 parameters each, well under SQLite's
 * limit on parameters).
 */
export async function upsertRateWindows(db: Kysely<Database>, instanceId: string, buckets: readonly PublishedWindows[], at: number): Promise<void> {
  if (buckets.length === 0) return;
  const rows = buckets.map(({ bucket, requests, tokens }) => ({
    instance_id: instanceId,
    bucket,
    updated_at: at,
    windows: encode(requests, tokens),
  }));
  await db
    .insertInto("rate_windows")
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(["instance_id", "bucket"]).doUpdateSet((eb) => ({
        updated_at: eb.ref("excluded.updated_at"),
        windows: eb.ref("excluded.windows"),
      })),
    )
    .execute();
}

/**
 * Deletes every row, whichever instance wrote it, not updated since `before`: a window written
 * that long ago has aged out whole. An instance that stopped or died leaves its rows to count
 * for the rest of their minute, for the others and for whichever instance starts next.
 */
export async function pruneRateWindows(db: Kysely<Database>, before: number): Promise<void> {
  await db.deleteFrom("rate_windows").where("updated_at", "<", before).execute();
}

/**
 * The latest updated_at of each other instance's rows. Read before the pages of a read
 * (readChangedPage): every row of an instance at or before its time was committed by then, so
 * those pages find it, or a later state of it.
 */
export async function latestWrites(db: Kysely<Database>, instanceId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("rate_windows")
    .select((eb) => ["instance_id", eb.fn.max("updated_at").as("latest")])
    .where("instance_id", "!=", instanceId)
    .groupBy("instance_id")
    .execute();
  return new Map(rows.map((row) => [row.instance_id, Number(row.latest)]));
}

/** Where a page of rows ends, in key order. */
export type RowKey = Pick<RateWindowsTable, "instance_id" | "bucket">;

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
): Promise<RateWindowsTable[]> {
  const thresholds = [...readFrom].map(([id, at]) => sql`when ${id} then ${at}`);
  const since = thresholds.length === 0 ? sql<number>`0` : sql<number>`case instance_id ${sql.join(thresholds, sql` `)} else 0 end`;
  let query = db.selectFrom("rate_windows").selectAll().where("instance_id", "!=", instanceId).where("updated_at", ">=", since);
  if (after) query = query.where((eb) => eb(eb.refTuple("instance_id", "bucket"), ">", eb.tuple(after.instance_id, after.bucket)));
  return query.orderBy("instance_id").orderBy("bucket").limit(limit).execute();
}

/** Every row updated at or after `since`, whichever instance wrote it. */
export function readRowsSince(db: Kysely<Database>, since: number): Promise<RateWindowsTable[]> {
  return db.selectFrom("rate_windows").selectAll().where("updated_at", ">=", since).execute();
}
