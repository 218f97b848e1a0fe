import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireManagementKey } from "../../auth/authenticate.ts";
import { adminSettingsRoutes } from "./settings.ts";
import { adminChannelRoutes } from "./channels.ts";
import { adminUserRoutes } from "./users.ts";
import { adminTokenRoutes } from "./tokens.ts";
import { adminTopUpRoutes } from "./topup.ts";
import { adminUsageRoutes } from "./usage.ts";
import { adminPriceRoutes } from "./prices.ts";

/** Everything under /v1/admin, behind a management key. */
export function adminRoutes(services: Services) {
  const admin = new Hono<AppEnv>();
  admin.use("*", requireManagementKey(services));
  for (const routes of [
    adminSettingsRoutes,
    adminChannelRoutes,
    adminUserRoutes,
    adminTokenRoutes,
    adminTopUpRoutes,
    adminUsageRoutes,
    adminPriceRoutes,
  ]) {
    admin.route("/", routes(services));
  }
  return admin;
}
