import { Hono } from "hono";
import { sql } from "kysely";
import type { AppEnv } from "../app-env.ts";
import { errorBody } from "../errors/gateway-error.ts";
import type { Services } from "../services.ts";

/** GET /health (process up; touches nothing) and GET /ready (database reachable, not draining). */
export function healthRoutes(services: Services) {
  return new Hono<AppEnv>()
    .get("/health", (c) => c.json({ status: "ok" }))
    .get("/ready", async (c) => {
      if (services.draining) return c.json(errorBody(503, "The gateway is shutting down"), 503);
      try {
        await sql`select 1`.execute(services.db);
      } catch {
        return c.json(errorBody(503, "The database is not reachable"), 503);
      }
      return c.json({ status: "ready" });
    });
}
