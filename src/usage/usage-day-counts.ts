import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

const DAY_MS = 86_400_000;

/** The usage rows a listing shows: a range of `created_at`, both ends inclusive, either left open, and perhaps one user's. */
export interface UsageRange {
  from?: number;
  to?: number;
  userId?: string;
}

/** The first and last days wholly inside the range (none when first > last); the rest is at its ends. */
function wholeDays({ from, to }: UsageRange): { first: number; last: number } {
  return {
    first: from === undefined ? Number.MIN_SAFE_INTEGER : Math.ceil(from / DAY_MS),
    last: to === undefined ? Number.MAX_SAFE_INTEGER : Math.floor((to + 1) / DAY_MS) - 1,
  };
}

/** The usage rows of a range, to select from: the listing's page and the counts filter alike. */
export function usageRowsIn(db: Kysely<Database>, { from, to, userId }: UsageRange) {
  let query = db.selectFrom("usage_logs");
  if (userId) query = query.where("user_id", "=", userId);
  if (from !== undefined) query = query.where("created_at", ">=", from);
  if (to !== undefined) query = query.where("created_at", "<=", to);
  return query;
}

/** Usage rows from `from` to `to` (inclusive), perhaps one user's, counted row by row: a part-day, or one user's rows through their index. */
async function countRows(db: Kysely<Database>, from: number | undefined, to: number | undefined, userId?: string): Promise<number> {
  const counted = usageRowsIn(db, { from, to, userId }).select((eb) => eb.fn.countAll<number>().as("n"));
  return Number((await counted.executeTakeFirstOrThrow()).n);
}

/** Each whole day's count, newest first. */
function dayCounts(db: Kysely<Database>, first: number, last: number) {
  return db.selectFrom("usage_days").select(["day", "rows"]).where("day", ">=", first).where("day", "<=", last).orderBy("day", "desc").execute();
}

/**
 * The usage rows in a range: the whole days from their counts (usage_days), the parts of a
 * day at its ends row by row. It reads a row per day and at most two days' rows, where a
 * count of every row took 25 ms with a million of them.
 */
export async function countUsage(db: Kysely<Database>, range: UsageRange): Promise<number> {
  // One user's rows are few, and counted through their index.
  if (range.userId) return countRows(db, range.from, range.to, range.userId);
  const { first, last } = wholeDays(range);
  if (first > last) return countRows(db, range.from, range.to);
  const [days, before, after] = await Promise.all([
    dayCounts(db, first, last),
    range.from === undefined ? 0 : countRows(db, range.from, first * DAY_MS - 1),
    range.to === undefined ? 0 : countRows(db, (last + 1) * DAY_MS, range.to),
  ]);
  return days.reduce((sum, day) => sum + day.rows, before + after);
}

/**
 * Where an offset page of a range (newest first) begins: the rows below `before` (when
 * given), `skip` rows in. The whole days the offset passes are skipped by their counts, so
 * the database steps over at most a day's rows, where the last page of a million stepped
 * over all of them (80 ms).
 */
export async function seekUsageOffset(db: Kysely<Database>, range: UsageRange, offset: number): Promise<{ before?: number; skip: number }> {
  const { first, last } = wholeDays(range);
  // One user's rows are few, and stepped over through their index.
  if (range.userId || first > last || offset === 0) return { skip: offset };
  let passed = range.to === undefined ? 0 : await countRows(db, (last + 1) * DAY_MS, range.to);
  if (passed > offset) return { skip: offset };
  let before = range.to === undefined ? undefined : (last + 1) * DAY_MS;
  for (const day of await dayCounts(db, first, last)) {
    if (passed + day.rows > offset) break;
    passed += day.rows;
    before = day.day * DAY_MS;
  }
  return { before, skip: offset - passed };
}
