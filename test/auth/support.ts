/**
 * Helpers shared by test/auth and test/errors: the error-shape assertion, accounts and
 * keys made through the admin API, and a logger that keeps what it is given.
 */
import { expect } from "bun:test";
import type { Logger } from "../../src/lib/logger.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import type { TestGateway } from "../helpers/gateway.ts";

/**
 * Asserts `response` is the spec's error: exactly `{"error":{"message","type","code"}}`,
 * `code` equal to the status, a non-empty message, a JSON content type. A Gemini-format path
 * adds Google's `status` name, a messages-format path Anthropic's top-level `type` and
 * `request_id`, as those providers write their errors, and another model path (not the admin
 * API) may add OpenAI's `param`. Returns the message.
 */
export async function expectError(response: Response, status: number, type: string): Promise<string> {
  const text = await response.text();
  expect({ status: response.status, text }).toEqual({ status, text: expect.any(String) });
  expect(response.headers.get("content-type") ?? "").toContain("application/json");
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`error body is not JSON: ${text}`);
  }
  const path = new URL(response.url).pathname;
  const anthropicPath = /^\/v1\/messages(\/|$)/.test(path);
  expect(Object.keys(body)).toEqual(anthropicPath ? ["type", "error", "request_id"] : ["error"]);
  if (anthropicPath) expect(body).toMatchObject({ type: "error", request_id: response.headers.get("request-id") });
  const geminiPath = /^\/v1(beta|alpha)\/|^\/v1\/models\/.+:/.test(path);
  // An OpenAI-format path adds the field at fault as OpenAI's `param`, when there is one.
  const openAiPath = !geminiPath && !anthropicPath && !path.startsWith("/v1/admin/");
  const keys = Object.keys(body.error).filter((key) => !(key === "param" && openAiPath && typeof body.error.param === "string" && body.error.param !== ""));
  expect(keys.sort()).toEqual(geminiPath ? ["code", "message", "status", "type"] : ["code", "message", "type"]);
  if (geminiPath) expect(body.error.status).toMatch(/^[A-Z_]+$/);
  expect(body.error.type).toBe(type);
  expect(body.error.code).toBe(status);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error.message as string;
}

let counter = 0;

/** A unique email for a test account. */
export function uniqueEmail(label = "user"): string {
  counter++;
  return `${label}-${Date.now().toString(36)}-${counter}@example.com`;
}

/**
 * Creates a user on the `enterprise` plan (high rate limits, so a test never meets a 429)
 * with a balance, through the admin API. Returns its id.
 */
export async function createUser(gw: TestGateway, balance = 10): Promise<string> {
  const user = await adminCreateUser(gw, { email: uniqueEmail(), plan: "enterprise", balance });
  return user.id as string;
}

export interface CreatedToken {
  userId: string;
  tokenId: string;
  key: string;
  body: any;
}

/** Creates a token (and, unless `userId` is given, a fresh user for it) through the admin API. */
export async function createToken(
  gw: TestGateway,
  fields: { userId?: string; name?: string; permissions?: string[]; role?: string; expires_at?: string; models?: string[] } = {},
): Promise<CreatedToken> {
  const userId = fields.userId ?? (await createUser(gw));
  const body: Record<string, unknown> = { user_id: userId, name: fields.name ?? "test key" };
  if (fields.permissions !== undefined) body.permissions = fields.permissions;
  if (fields.role !== undefined) body.role = fields.role;
  if (fields.expires_at !== undefined) body.expires_at = fields.expires_at;
  if (fields.models !== undefined) body.models = fields.models;
  const created = await adminCreateToken(gw, body);
  expect(typeof created.key).toBe("string");
  return { userId, tokenId: created.id, key: created.key, body: created };
}

/** A JSON chat request body for the mock model. */
export function chatBody(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "Hello" }], ...overrides });
}

/** POST /v1/chat/completions with `key` as Bearer. */
export function postChat(gw: TestGateway, key: string, body: string | Record<string, unknown> = chatBody()): Promise<Response> {
  return gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** GET /v1/models with `key` as Bearer. */
export function getModels(gw: TestGateway, key: string): Promise<Response> {
  return gw.fetch("/v1/models", { headers: { authorization: `Bearer ${key}` } });
}

/** JSON of log arguments; an Error is written with its message and stack so nothing hides in it. */
function serialize(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v));
}

/** A logger that keeps the JSON of every call's arguments. */
export class CollectingLogger implements Logger {
  readonly entries: string[] = [];
  info(message: string, fields?: Record<string, unknown>): void {
    this.entries.push(serialize(["info", message, fields ?? null]));
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.entries.push(serialize(["warn", message, fields ?? null]));
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.entries.push(serialize(["error", message, fields ?? null]));
  }
}

/** A key-shaped string the gateway never issued. */
export function unknownApiKey(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let secret = "";
  for (let i = 0; i < 40; i++) secret += alphabet[Math.floor(Math.random() * alphabet.length)];
  return `sk-gw-${secret}`;
}

export { sleep } from "../helpers/common.ts";
