import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import { parsePaging } from "../../admin/paging.ts";
import { microsToUsd } from "../../lib/money.ts";
import { isoOf, isRealDate } from "../../lib/time.ts";

/** Date only, or a date and time with optional seconds, fraction and zone. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A query date: ISO 8601 (a date, or a date and time); a date-only end_date covers its whole
 * day. A query string reads a bare '+' as a space, so a zone typed as +05:00 arrives as
 * " 05:00", which nothing else can mean: it is read as the offset it was.
 */
function parseDate(name: string, query: string | undefined, endOfDay: boolean): number | undefined {
  if (query === undefined || query === "") return undefined;
  const text = query.replace(/(T[\d:.]+) (\d{2}:?\d{2})$/, "$1+$2");
  const ms = ISO_8601.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isNaN(ms) && !isRealDate(text.slice(0, 10))) throw badRequest(`Invalid '${name}': ${text.slice(0, 10)} is not a calendar date`);
  if (Number.isNaN(ms)) throw badRequest(`Invalid '${name}': must be an ISO 8601 date, e.g. 2026-11-01 or 2026-11-01T12:00:00Z`);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  return dateOnly && endOfDay ? ms + 86_400_000 - 1 : ms;
}


/** GET /v1/admin/usage (spec 4.12): filters user_id, start_date, end_date; newest first. */
export function adminUsageRoutes(services: Services) {
  return new Hono<AppEnv>().get("/usage", async (c) => {
    const { page, limit, offset } = parsePaging((n) => c.req.query(n), 50, 200);
    const start = parseDate("start_date", c.req.query("start_date"), false);
    const end = parseDate("end_date", c.req.query("end_date"), true);
    if (start !== undefined && end !== undefined && start > end) throw badRequest("'start_date' must not be after 'end_date'");
    const userId = c.req.query("user_id");
    let query = services.db.selectFrom("usage_logs");
    if (userId) query = query.where("user_id", "=", userId);
    if (start !== undefined) query = query.where("created_at", ">=", start);
    if (end !== undefined) query = query.where("created_at", "<=", end);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    ]);
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
    return c.json({ usage, total: Number(count.n), page, limit });
  });
}
