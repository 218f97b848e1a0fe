/**
 * README "Running it": `npm run start:deno` serves the gateway under Deno. The script is run
 * as npm runs it (`sh -c`, node_modules/.bin first on PATH), with `exec` so that the SIGTERM
 * that stops it reaches the gateway rather than the shell.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killAllSpawned, REPO_ROOT, spawnGateway } from "../billing/_support.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";

const dir = mkdtempSync(join(tmpdir(), "gateway-deno-"));

afterAll(async () => {
  await killAllSpawned();
  rmSync(dir, { recursive: true, force: true });
});

test("npm run start:deno starts a gateway that serves and stops cleanly on SIGTERM", async () => {
  const script = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).scripts["start:deno"] as string;
  const path = `${join(REPO_ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;
  const gateway = await spawnGateway(dir, { PATH: path }, 30_000, ["sh", "-c", `exec ${script}`]);
  expect((await gateway.fetch("/v1/models", { headers: { authorization: "Bearer sk-gw-unknown" } })).status).toBe(401);
  // A chat reads request.signal (a hang-up aborts the upstream call).
  const user = await adminCreateUser(gateway, { email: "deno@example.com", balance: 1 });
  const token = await adminCreateToken(gateway, { user_id: user.id, name: "deno" });
  expect((await gateway.admin("POST", "/v1/admin/channels", { name: "mock", type: "mock", models: ["demo-chat"] })).status).toBe(201);
  const chat = await gateway.fetch("/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${token.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(chat.status).toBe(200);
  await chat.text();
  expect(await gateway.stop()).toBe(0);
  // deno.json opts in to request.signal aborting only on a real hang-up, which is what the
  // gateway reads it as; without that Deno warns on the first successful answer.
  expect(gateway.output()).not.toContain("legacy behavior");
}, 60_000);
