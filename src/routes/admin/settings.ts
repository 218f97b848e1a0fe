import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { applySettingsPatch, SettingsPatchSchema, settingsView } from "../../settings/settings-schema.ts";

/** GET and PATCH /v1/admin/settings. */
export function adminSettingsRoutes(services: Services) {
  return new Hono<AppEnv>()
    .get("/settings", (c) => c.json(settingsView(services.settings.current)))
    .patch("/settings", async (c) => {
      const patch = parseOrThrow(SettingsPatchSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      await services.changes.commit({ kind: "settings" }, (trx) => services.settings.update(trx, (stored) => applySettingsPatch(stored, patch)));
      return c.json(settingsView(services.settings.current));
    });
}
