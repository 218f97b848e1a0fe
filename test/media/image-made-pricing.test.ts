/**
 * An image whose size or quality the caller leaves to the model (left out, or `auto`: GPT
 * image models' default for both) is sent without them, held at the dearest the price table
 * lists, and charged at the size and quality the answer says it made.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";

const TINY_PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

let gw: TestGateway;
let upstream: ReturnType<typeof Bun.serve>;
/** What the loopback GPT image model says it made; undefined fields are left out of its answer. */
let made: { size?: string; quality?: string } = {};
let sentBodies: Record<string, unknown>[] = [];

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { n?: number };
      sentBodies.push(body);
      const data = Array.from({ length: body.n ?? 1 }, () => ({ b64_json: TINY_PNG_BASE64 }));
      return Response.json({ created: 1_700_000_000, data, ...made });
    },
  });
  gw = await startTestGateway();
  const channel = await gw.admin("POST", "/v1/admin/channels", {
    name: "gpt-image",
    type: "openai",
    base_url: `http://127.0.0.1:${upstream.port}/v1`,
    api_key: "sk-image",
    models: ["gpt-image-1"],
  });
  expect(channel.status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.stop(true);
});
beforeEach(() => {
  made = {};
  sentBodies = [];
});

const START = 1_000_000;

async function generate(extra: Record<string, unknown>, balanceMicros = START) {
  const user = await adminCreateUser(gw, { email: `made-${crypto.randomUUID()}@example.test`, plan: "enterprise", balance: balanceMicros / 1e6 });
  const { key } = await adminCreateToken(gw, { user_id: user.id, name: "k" });
  const response = await gw.fetch("/v1/images/generations", { method: "POST", headers: bearer(key), body: JSON.stringify({ model: "gpt-image-1", prompt: "a kite", ...extra }) });
  return { response, userId: user.id };
}

/** The request's hold and charge, from its ledger rows, and the books checked. */
async function heldAndCharged(requestId: string) {
  await gw.services.usage.flush();
  const db = gw.database.db;
  const ledger = await db.selectFrom("ledger").select(["kind", "amount_micros"]).where("reference", "=", requestId).orderBy("id").execute();
  expect(ledger.map((row) => row.kind)).toEqual(["hold", "settle"]);
  const held = -ledger[0]!.amount_micros;
  const row = await db.selectFrom("usage_logs").select("cost_micros").where("request_id", "=", requestId).executeTakeFirstOrThrow();
  expect(ledger[1]!.amount_micros + 0).toBe(held - row.cost_micros); // the settle returns what was not spent
  expect((await checkLedger(db)).problems).toEqual([]);
  return { held, charged: row.cost_micros };
}

describe("images left to the model: held at the dearest, charged at what was made (gpt-image-1's list prices)", () => {
  test("no size or quality: neither is sent; held at 0.25 (1536x1024 high), charged 0.25 for what the answer says it made", async () => {
    made = { size: "1536x1024", quality: "high" };
    const { response } = await generate({});
    expect(response.status).toBe(200);
    expect(Object.keys(sentBodies[0]!).sort()).toEqual(["model", "n", "prompt"]);
    expect(await heldAndCharged(response.headers.get("x-request-id")!)).toEqual({ held: 250_000, charged: 250_000 });
  });

  test("no size, quality low, two images made at 1024x1024: held 2 × 0.016, charged 2 × 0.011", async () => {
    made = { size: "1024x1024", quality: "low" };
    const { response } = await generate({ quality: "low", n: 2 });
    expect(response.status).toBe(200);
    expect(sentBodies[0]).toMatchObject({ quality: "low", n: 2 });
    expect(sentBodies[0]!.size).toBeUndefined();
    expect(await heldAndCharged(response.headers.get("x-request-id")!)).toEqual({ held: 32_000, charged: 22_000 });
  });

  test("size auto and quality auto are sent as auto; made at 1024x1536 medium: charged 0.063", async () => {
    made = { size: "1024x1536", quality: "medium" };
    const { response } = await generate({ size: "auto", quality: "auto" });
    expect(response.status).toBe(200);
    expect(sentBodies[0]).toMatchObject({ size: "auto", quality: "auto" });
    expect(await heldAndCharged(response.headers.get("x-request-id")!)).toEqual({ held: 250_000, charged: 63_000 });
  });

  test("a size named, quality left out: held at the size's dearest (0.167), charged at the quality made (medium, 0.042)", async () => {
    made = { size: "1024x1024", quality: "medium" };
    const { response } = await generate({ size: "1024x1024" });
    expect(response.status).toBe(200);
    expect(await heldAndCharged(response.headers.get("x-request-id")!)).toEqual({ held: 167_000, charged: 42_000 });
  });

  test("an answer that says nothing is charged at DALL-E's defaults, 1024x1024 standard (0.042)", async () => {
    const { response } = await generate({});
    expect(response.status).toBe(200);
    expect(await heldAndCharged(response.headers.get("x-request-id")!)).toEqual({ held: 250_000, charged: 42_000 });
  });

  test("a size or quality the table does not price, or one the caller did not allow, is charged as held", async () => {
    made = { size: "2048x2048", quality: "high" };
    const unpriced = await generate({});
    expect(unpriced.response.status).toBe(200);
    expect(await heldAndCharged(unpriced.response.headers.get("x-request-id")!)).toEqual({ held: 250_000, charged: 250_000 });
    // Asked for low, the answer claims high: the caller's own quality is what it pays for.
    const claimed = await generate({ quality: "low", size: "1024x1024" });
    expect(claimed.response.status).toBe(200);
    expect(await heldAndCharged(claimed.response.headers.get("x-request-id")!)).toEqual({ held: 11_000, charged: 11_000 });
  });

  test("a balance that covers the likely image but not the dearest the model may make is a 402, before any upstream call", async () => {
    const { response } = await generate({}, 100_000);
    expect(response.status).toBe(402);
    expect(sentBodies).toEqual([]);
  });
});
