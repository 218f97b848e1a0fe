import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { KyselyPlugin } from "kysely";
import { startTestGateway, TEST_MANAGEMENT_KEY, type TestGateway } from "../helpers/gateway.ts";
import { waitFor } from "../billing/_support.ts";
import { openDatabase } from "../../src/db/open-database.ts";
import { loadConfig } from "../../src/config.ts";
import { createServices } from "../../src/services.ts";
import { createApp } from "../../src/app.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { createTempUpload } from "../../src/runtime/node-temp-upload.ts";

/**
 * Instances sharing a database reload their keys, channels, prices and settings when the
 * change counter moves (src/state/change-feed.ts). An instance that starts takes the counter
 * it will compare with, and loads the state: a change another instance makes between the two
 * must still reach it.
 */

const MODEL = "feed-model";
let a: TestGateway;

beforeAll(async () => {
  a = await startTestGateway({ strictPricing: true });
  expect((await a.admin("POST", "/v1/admin/prices", { model: MODEL, input_per_million: 3, output_per_million: 15 })).status).toBe(200);
});
afterAll(() => a.close());

/** A plugin on the starting instance's database: once it has read the prices, `change` runs before anything else it reads. */
function afterPricesRead(change: () => Promise<void>): { plugin: KyselyPlugin; ran: () => boolean } {
  let ran = false;
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => node,
    async transformResult({ result }) {
      if (!ran && result.rows.some((row) => "output_per_million_micros" in row)) {
        ran = true;
        await change();
      }
      return result;
    },
  };
  return { plugin, ran: () => ran };
}

test("an instance that starts while another changes a price serves the new price after its next poll", async () => {
  const url = `file:${join(a.dir, "gateway.db")}`;
  const database = openDatabase(url);
  // The change lands after the new instance read the prices table, before it read the change counter.
  const { plugin, ran } = afterPricesRead(async () => {
    expect((await a.admin("POST", "/v1/admin/prices", { model: MODEL, input_per_million: 5, output_per_million: 25 })).status).toBe(200);
  });
  const services = await createServices({
    db: database.db.withPlugin(plugin),
    sql: database.sql,
    config: loadConfig({ DATABASE_URL: url }),
    now: Date.now,
    fetch,
    log: silentLogger,
    identity: { host: "test-host", pid: 4_300_001, isAlive: () => null },
    createTempUpload: () => createTempUpload(),
  });
  expect(ran()).toBe(true);
  services.changes.start(20);
  try {
    const app = createApp(services);
    const served = async () => {
      const response = await app.request("/v1/admin/prices", { headers: { authorization: `Bearer ${TEST_MANAGEMENT_KEY}` } });
      return (await response.json()).prices.find((p: { model: string }) => p.model === MODEL);
    };
    await waitFor("the new price on the started instance", async () => (await served())?.input_per_million === 5, 2_000).catch(() => {});
    expect(await served()).toMatchObject({ input_per_million: 5, output_per_million: 25 });
  } finally {
    services.changes.stop();
    await database.close();
  }
});
