import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runGateway } from "../../src/boot.ts";
import { openDatabase } from "../../src/db/open-database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { KEEP_RESPONSES_MS } from "../../src/state/kept-responses.ts";
import { testRuntimeHost } from "../helpers/runtime-host.ts";
import { waitFor } from "../billing/_support.ts";

test("a started gateway deletes the kept Responses that expired before it started, with their items, and keeps the others", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-kept-sweep-"));
  const url = `file:${join(dir, "g.db")}`;
  const setUp = openDatabase(url);
  await migrate(setUp.db, Date.now);
  const made = Date.now() - KEEP_RESPONSES_MS;
  for (const [id, createdAt] of [["resp_expired", made - 1], ["resp_live", made + 60_000]] as const) {
    setUp.sql.run("INSERT INTO kept_responses (id, user_id, created_at, expires_at, bytes, kept_json) VALUES (?, 'u1', ?, ?, 2, '{}')", [id, createdAt, createdAt + KEEP_RESPONSES_MS]);
    setUp.sql.run("INSERT INTO kept_response_items (item_id, response_id) VALUES (?, ?)", [`msg_of_${id}`, id]);
  }
  await setUp.close();

  const { host, shutdown } = testRuntimeHost(dir);
  await runGateway(host);
  const reader = openDatabase(url);
  try {
    const ids = (query: string) => reader.sql.get<{ ids: string | null }>(query, [])!.ids;
    await waitFor("the sweep", () => ids("SELECT group_concat(id) AS ids FROM kept_responses") === "resp_live");
    expect(ids("SELECT group_concat(response_id) AS ids FROM kept_response_items")).toBe("resp_live");
  } finally {
    await reader.close();
    expect(await shutdown()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
