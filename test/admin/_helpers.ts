import { expect } from "bun:test";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { bearer, type TestGateway } from "../helpers/gateway.ts";

/** ISO 8601 UTC timestamp as Date#toISOString writes it (or with a zone offset). */
export const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function expectIso(value: unknown): void {
  expect(typeof value).toBe("string");
  expect(value as string).toMatch(ISO_8601);
  expect(Number.isNaN(Date.parse(value as string))).toBe(false);
}

/** A finite JSON number (USD amounts, costs). */
export function expectMoney(value: unknown): void {
  expect(typeof value).toBe("number");
  expect(Number.isFinite(value as number)).toBe(true);
}

export function expectInteger(value: unknown): void {
  expect(typeof value).toBe("number");
  expect(Number.isInteger(value)).toBe(true);
}

/** The spec section 7 error body, with the DESIGN.md section 5 type for the status. */
export function expectError(response: { status: number; body: any }, status: number, type: string): void {
  expect({ status: response.status, type: response.body?.error?.type }).toEqual({ status, type });
  expect(Object.keys(response.body).sort()).toEqual(["error"]);
  expect(typeof response.body.error.message).toBe("string");
  expect(response.body.error.message.length).toBeGreaterThan(0);
  expect(response.body.error.code).toBe(status);
}

/** A raw request, the response parsed as JSON (null when empty). */
export async function call(
  gw: TestGateway,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: any; text: string }> {
  const response = await gw.fetch(path, { method, headers: init.headers, body: init.body });
  const text = await response.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { unparsable: text };
  }
  return { status: response.status, body, text };
}

let counter = 0;
/** An email no other test uses. */
export function uniqueEmail(tag = "user"): string {
  counter += 1;
  return `${tag}-${counter}-${crypto.randomUUID().slice(0, 8)}@example.test`;
}

export async function createUser(gw: TestGateway, fields: Record<string, unknown> = {}): Promise<any> {
  return adminCreateUser(gw, { email: uniqueEmail(), ...fields });
}

/** Creates a token; the body includes `key`. */
export async function createToken(gw: TestGateway, userId: string, fields: Record<string, unknown> = {}): Promise<any> {
  return adminCreateToken(gw, { user_id: userId, name: "test token", ...fields });
}

/** A user with a balance and an API key of theirs. */
export async function userWithKey(gw: TestGateway, balance = 5): Promise<{ user: any; token: any; key: string }> {
  const user = await createUser(gw, { balance });
  const token = await createToken(gw, user.id);
  return { user, token, key: token.key };
}

export const CHAT_BODY = JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "hi" }] });

export async function chat(gw: TestGateway, key: string): Promise<{ status: number; body: any; text: string }> {
  return call(gw, "POST", "/v1/chat/completions", { headers: bearer(key), body: CHAT_BODY });
}

export async function getModels(gw: TestGateway, key: string): Promise<number> {
  const response = await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

/** Hex SHA-256, to check no list shows a stored hash. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Every string value found anywhere in a JSON value. */
export function stringValues(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringValues(item, out);
  else if (value && typeof value === "object") for (const item of Object.values(value)) stringValues(item, out);
  return out;
}
