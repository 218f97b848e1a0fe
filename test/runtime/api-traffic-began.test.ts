import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runGateway } from "../../src/boot.ts";
import { testRuntimeHost } from "../helpers/runtime-host.ts";

test("the runtime hears once, at the first request to the API, that traffic began: the probes and the admin API are not traffic", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-traffic-"));
  let began = 0;
  const { host, shutdown } = testRuntimeHost(dir, { apiTrafficBegan: () => (began += 1) });
  const server = await runGateway(host);
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${server.port}${path}`, { headers });
  const management = { authorization: `Bearer ${host.env.GATEWAY_MANAGEMENT_KEY}` };
  try {
    expect((await get("/health")).status).toBe(200);
    expect((await get("/ready")).status).toBe(200);
    expect((await get("/v1/admin/settings", management)).status).toBe(200);
    expect((await get("/v1/admin/users", management)).status).toBe(200);
    expect(began).toBe(0);
    // A request without a key is still the API's traffic: its 401 runs the code that serves.
    expect((await get("/v1/models")).status).toBe(401);
    expect(began).toBe(1);
    expect((await get("/v1/models")).status).toBe(401);
    expect((await get("/health")).status).toBe(200);
    expect(began).toBe(1);
  } finally {
    expect(await shutdown()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
