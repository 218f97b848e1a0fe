import { expect } from "bun:test";
import { bearer, exactCostBody, openReadOnly, PRICE_BODY, waitFor, type GatewayProcess } from "../billing/_support.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { totalsOf, type RowTotals } from "./_support.ts";

/**
 * Helpers of the rate-limit tests on real gateway processes sharing one database file in
 * `dir`. An exchange is waited for, never slept for: each process also serves a probe key,
 * and once the row of its probe requests has grown in the database, the process has finished
 * an exchange that began after the wait did (exchanges are write transactions, one at a time),
 * and in it read every row committed before.
 */

export const MODEL = "m1";

export interface Key {
  key: string;
  /** The rate-limit bucket the key counts in. */
  bucket: string;
}

/** The mock model with a price, set up through `gw`. */
export async function serveModel(gw: GatewayProcess): Promise<void> {
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "mock", type: "mock", models: [MODEL] })).status).toBe(201);
  expect((await gw.admin("POST", "/v1/admin/prices", { model: MODEL, ...PRICE_BODY })).status).toBe(200);
}

/** A key on a new account of `plan`, made through `gw`; with its own limits, it counts in a bucket of its own. */
export async function newKey(gw: GatewayProcess, plan: string, ownLimits?: Record<string, number>): Promise<Key> {
  const user = await adminCreateUser(gw, { email: `${crypto.randomUUID()}@example.test`, plan, balance: 10 });
  const token = await adminCreateToken(gw, { user_id: user.id, name: "k", ...ownLimits });
  return { key: token.key, bucket: ownLimits ? `key:${token.id}` : `user:${user.id}` };
}

/** `response` is the 429 of a free-plan key out of requests, with its body and headers. */
export async function expectFreePlanRefused(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect((await response.json()).error).toEqual({ message: expect.stringContaining("requests per minute"), type: "rate_limit_error", code: 429 });
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(response.headers.get("x-ratelimit-limit-requests")).toBe("10");
  expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  expect(response.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+(\.\d+)?s$|^\d+m[\d.]+s$/);
}

export const chat = (gw: GatewayProcess, key: string) =>
  gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(key), body: JSON.stringify(exactCostBody(MODEL)) });

/** What `read` finds in the database file of `dir`, opened read-only for it. */
export function readFile<T>(dir: string, read: (db: ReturnType<typeof openReadOnly>) => T): T {
  const db = openReadOnly(dir);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** `gw`'s row of rate_windows for `bucket`, in sums, found through its pid while its instance is registered. */
export function rateRow(dir: string, gw: GatewayProcess, bucket: string): RowTotals | undefined {
  const row = readFile(dir, (db) => db.query("select r.windows from rate_windows r join instances i on i.id = r.instance_id where i.pid = ? and r.bucket = ?").get(gw.pid, bucket)) as { windows: string } | null;
  return row ? totalsOf(row) : undefined;
}

/** Resolves once `gw` has finished an exchange that began after this call (see the file's comment). */
export async function exchanged(dir: string, gw: GatewayProcess, probe: Key): Promise<void> {
  const before = rateRow(dir, gw, probe.bucket)?.requests ?? 0;
  // A probe admitted while `gw` did not know of the other process yet is dropped, so probe on.
  await waitFor("an exchange", async () => {
    await (await chat(gw, probe.key)).text();
    return (rateRow(dir, gw, probe.bucket)?.requests ?? 0) > before;
  });
}
