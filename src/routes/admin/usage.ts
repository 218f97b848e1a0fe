import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import { parsePaging } from "../../admin/paging.ts";
import { microsToUsd } from "../../lib/money.ts";
import { isoOf, isRealDate } from "../../lib/time.ts";
import { countUsage, seekUsageOffset, usageRowsIn } from "../../usage/usage-day-counts.ts";

/** Date only, or a date and time with optional seconds, fraction and zone. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A query date: ISO 8601 (a date, or a date and time); a date-only end_date covers its whole
 * day. A query string reads a bare '+' as a space, so a zone typed as +05:00 arrives as
 * " 05:00", which nothing else can mean: it is read as the offset it was. A time without a
 * zone is UTC, as every time the listing shows: Date.parse reads it in the host's zone, so
 * instances in two zones answered one query differently.
 */
function parseDate(name: string, query: string | undefined, endOfDay: boolean): number | undefined {
  if (query === undefined || query === "") return undefined;
  const text = query.replace(/(T[\d:.]+) (\d{2}:?\d{2})$/, "$1+$2");
  const ms = ISO_8601.test(text) ? Date.parse(/T[\d:.]+$/.test(text) ? `${text}Z` : text) : Number.NaN;
  if (!Number.isNaN(ms) && !isRealDate(text.slice(0, 10))) throw badRequest(`Invalid '${name}': ${text.slice(0, 10)} is not a calendar date`);
  if (Number.isNaN(ms)) throw badRequest(`Invalid '${name}': must be an ISO 8601 date, e.g. 2026-11-01 or 2026-11-01T12:00:00Z`);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  return dateOnly && endOfDay ? ms + 86_400_000 - 1 : ms;
}


/**
 * Where a page ended: the last row's place in the listing's order (created_at, then id, both
 * descending). Rows arriving meanwhile go to the top, so the rows after a cursor stay the same,
 * where an offset (page 2 after page 1) would shift by however many arrived.
 */
interface Cursor {
  createdAt: number;
  id: string;
}

const CURSOR = /^(\d{1,15})\.([A-Za-z0-9_]{1,64})$/;

function cursorText(row: { created_at: number; id: string }): string {
  return `${row.created_at}.${row.id}`;
}

function parseCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined || text === "") return undefined;
  const match = CURSOR.exec(text);
  if (!match) throw badRequest("Invalid 'cursor': pass the 'next_cursor' of the previous page unchanged");
  return { createdAt: Number(match[1]), id: match[2]! };
}

/**
 * GET /v1/admin/usage (spec 4.12): filters user_id, start_date, end_date; newest first. Paged
 * by `page` (spec) or by `cursor`, the `next_cursor` of the previous page (null after the last).
 */
export function adminUsageRoutes(services: Services) {
  return new Hono<AppEnv>().get("/usage", async (c) => {
    const cursor = parseCursor(c.req.query("cursor"));
    if (cursor && c.req.query("page") !== undefined) throw badRequest("Pass either 'page' or 'cursor', not both");
    const { page, limit, offset } = parsePaging((n) => c.req.query(n), 50, 200);
    const start = parseDate("start_date", c.req.query("start_date"), false);
    const end = parseDate("end_date", c.req.query("end_date"), true);
    if (start !== undefined && end !== undefined && start > end) throw badRequest("'start_date' must not be after 'end_date'");
    const userId = c.req.query("user_id");
    const range = { from: start, to: end, userId };
    let pageQuery = usageRowsIn(services.db, range);
    let skip = 0;
    // As a row value, the key (created_at, id) the table is ordered by: SQLite seeks to it.
    // Written as `created_at < ? or (created_at = ? and id < ?)` it scanned from the newest
    // row down to the cursor (70 ms half-way through a million rows).
    if (cursor) pageQuery = pageQuery.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(cursor.createdAt, cursor.id)));
    else {
      const seek = await seekUsageOffset(services.db, range, offset);
      if (seek.before !== undefined) pageQuery = pageQuery.where("created_at", "<", seek.before);
      skip = seek.skip;
    }
    // One row past the page tells whether another page follows.
    const [rows, total] = await Promise.all([
      pageQuery.selectAll().orderBy("created_at", "desc").orderBy("id", "desc").limit(limit + 1).offset(skip).execute(),
      countUsage(services.db, range),
    ]);
    const more = rows.length > limit;
    if (more) rows.pop();
    const usage = rows.map((r) => ({
      id: r.id,
      user_id: r.user_id,
      model: r.model,
      endpoint: r.endpoint,
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      cost: microsToUsd(r.cost_micros),
      timestamp: isoOf(r.created_at),
      request_id: r.request_id,
      token_id: r.token_id,
      status: r.status,
      latency_ms: r.latency_ms,
      channel_id: r.channel_id,
      stream: r.stream === 1,
    }));
    const last = rows.at(-1);
    return c.json({ usage, total, page, limit, next_cursor: more && last ? cursorText(last) : null });
  });
}
