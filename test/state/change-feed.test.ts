import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { sql, type KyselyPlugin } from "kysely";
import { bearer, startTestGateway, TEST_MANAGEMENT_KEY, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
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

/**
 * An admin change and the move of the change counter are one transaction: when the counter
 * cannot move (here a trigger refuses it, standing for a process killed between the two
 * writes), the change is not stored either. Stored without it, it was served by the instance
 * that made it (or not even that: its reload never ran) and never by the others.
 */
async function withStuckCounter(run: () => Promise<void>): Promise<void> {
  const other = openDatabase(`file:${join(a.dir, "gateway.db")}`);
  await sql`create trigger counter_stuck before update on settings when old.key = 'cache_epoch' begin select raise(abort, 'the change counter cannot move'); end`.execute(other.db);
  try {
    await run();
  } finally {
    await sql`drop trigger counter_stuck`.execute(other.db);
    await other.close();
  }
}

/** Waits for `b` to have polled the change feed a few times since now. */
const afterPolls = () => new Promise((resolve) => setTimeout(resolve, 200));

test("a price change whose change counter cannot move leaves the price where every instance serves it", async () => {
  const model = "feed-stuck-model";
  expect((await a.admin("POST", "/v1/admin/prices", { model, input_per_million: 3, output_per_million: 15 })).status).toBe(200);
  const b = await startTestGateway({ dir: a.dir });
  b.services.changes.start(20);
  try {
    await withStuckCounter(async () => {
      expect((await a.admin("POST", "/v1/admin/prices", { model, input_per_million: 7, output_per_million: 35 })).status).not.toBe(200);
    });
    await afterPolls();
    const stored = await a.database.db.selectFrom("prices").select("input_per_million_micros").where("model", "=", model).executeTakeFirstOrThrow();
    const served = async (gw: TestGateway) => (await gw.admin("GET", "/v1/admin/prices")).body.prices.find((p: { model: string }) => p.model === model).input_per_million * 1e6;
    const micros = Number(stored.input_per_million_micros);
    expect({ a: await served(a), b: await served(b) }).toEqual({ a: micros, b: micros });
  } finally {
    b.services.changes.stop();
    await b.close({ keepFiles: true });
  }
});

test("a key revocation whose change counter cannot move leaves the key as every instance treats it", async () => {
  const b = await startTestGateway({ dir: a.dir });
  b.services.changes.start(20);
  try {
    const user = await adminCreateUser(a, { email: `${crypto.randomUUID()}@example.test`, balance: 1 });
    const token = await adminCreateToken(a, { user_id: user.id, name: "to revoke" });
    const accepted = async (gw: TestGateway) => (await gw.fetch("/v1/models", { headers: bearer(token.key) })).status === 200;
    // Both instances have the key in their caches.
    expect({ a: await accepted(a), b: await accepted(b) }).toEqual({ a: true, b: true });
    await withStuckCounter(async () => {
      expect((await a.admin("DELETE", `/v1/admin/tokens/${token.id}`)).status).not.toBe(200);
    });
    await afterPolls();
    const stored = await a.database.db.selectFrom("tokens").select("status").where("id", "=", token.id).executeTakeFirstOrThrow();
    const active = stored.status === "active";
    expect({ stored: stored.status, a: await accepted(a), b: await accepted(b) }).toEqual({ stored: stored.status, a: active, b: active });
  } finally {
    b.services.changes.stop();
    await b.close({ keepFiles: true });
  }
});
