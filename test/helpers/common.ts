import { expect } from "bun:test";

/**
 * Small helpers shared by the test folders: waiting, seeded randomness, Bearer headers, and
 * creating users and tokens through the admin API of an in-process gateway (gateway.ts) or a
 * spawned one.
 * No gateway code is imported here, so process-level tests can use it cheaply.
 */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A deterministic pseudo-random generator (mulberry32): the same seed gives the same draws on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** JSON headers with a Bearer key. */
export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, "content-type": "application/json" };
}

/** What the account helpers need of a gateway: its admin call (management key, JSON in and out). */
export interface AdminApi {
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** POST /v1/admin/users with `fields`; expects 201 and returns the created user. */
export async function adminCreateUser(gw: AdminApi, fields: Record<string, unknown>): Promise<any> {
  const created = await gw.admin("POST", "/v1/admin/users", fields);
  expect(created.status).toBe(201);
  return created.body;
}

/** POST /v1/admin/tokens with `fields`; expects 201 and returns the created token (`key` included). */
export async function adminCreateToken(gw: AdminApi, fields: Record<string, unknown>): Promise<any> {
  const created = await gw.admin("POST", "/v1/admin/tokens", fields);
  expect(created.status).toBe(201);
  return created.body;
}
