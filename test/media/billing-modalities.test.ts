/**
 * DESIGN.md sections 4 and 6 for the media endpoints: each modality is priced in its own unit
 * (tokens, documents, images by size and quality, characters, minutes of audio), a request is
 * settled exactly once (one usage row, one hold and one settle ledger row, no hold left, the
 * ledger sums to the balance), a balance that cannot cover the hold is a 402 before any
 * upstream call, and the free plan's 10 requests a minute (spec 8) applies to embeddings.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser, sleep } from "../helpers/common.ts";
import { expectError } from "../auth/support.ts";
import { waitFor } from "../billing/_support.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";
import { encodeWav } from "../../src/audio/encode-wav.ts";

let gw: TestGateway;
/** A loopback OpenAI-compatible upstream that answers every media path and counts the calls. */
let upstream: ReturnType<typeof Bun.serve>;
const upstreamCalls: string[] = [];

function startCountingUpstream() {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      upstreamCalls.push(path);
      if (path.endsWith("/audio/transcriptions") || path.endsWith("/audio/translations")) {
        await request.arrayBuffer();
        return Response.json({ text: "counted" });
      }
      const body = (await request.json()) as any;
      if (path.endsWith("/embeddings")) {
        const inputs: string[] = body.input;
        return Response.json({ data: inputs.map((_, index) => ({ index, embedding: [0.5, 0.5] })), usage: { prompt_tokens: inputs.reduce((n, t) => n + Math.ceil(t.length / 4), 0) } });
      }
      if (path.endsWith("/rerank")) return Response.json({ results: body.documents.map((_: string, index: number) => ({ index, relevance_score: 1 / (index + 1) })) });
      if (path.endsWith("/images/generations")) return Response.json({ data: Array.from({ length: body.n }, () => ({ url: "https://images.example.test/1.png" })) });
      if (path.endsWith("/audio/speech")) return new Response(new Uint8Array(4096), { headers: { "content-type": "audio/mpeg" } });
      return Response.json({ error: { message: "unknown path" } }, { status: 404 });
    },
  });
}

beforeAll(async () => {
  upstream = startCountingUpstream();
  gw = await startTestGateway();
  const prices = [
    // Larger than the defaults so that small requests cost visible amounts.
    { model: "demo-embed", mode: "embedding", input_per_million: 1000 },
    { model: "demo-tts", mode: "speech", per_1k_characters: 1 },
    { model: "cnt-embed", mode: "embedding", input_per_million: 1000 },
    { model: "cnt-rerank", mode: "rerank", per_1k_documents: 1000 },
    { model: "cnt-image", mode: "image", per_image: 0.01 },
    { model: "cnt-tts", mode: "speech", per_1k_characters: 1 },
    { model: "cnt-transcribe", mode: "transcription", per_minute: 1 },
  ];
  for (const price of prices) expect((await gw.admin("POST", "/v1/admin/prices", price)).status).toBe(200);
  const channel = await gw.admin("POST", "/v1/admin/channels", {
    name: "counting",
    type: "openai",
    base_url: `http://127.0.0.1:${upstream.port}/v1`,
    api_key: "sk-counting",
    models: ["cnt-embed", "cnt-rerank", "cnt-image", "cnt-tts", "cnt-transcribe", "gpt-image-1"],
  });
  expect(channel.status).toBe(201);
});
afterAll(async () => {
  await gw.close();
  await upstream.stop(true);
});

async function newAccount(micros: number, plan = "enterprise"): Promise<{ id: string; key: string }> {
  const user = await adminCreateUser(gw, { email: `bm-${crypto.randomUUID()}@example.test`, plan, balance: micros / 1e6 });
  return { id: user.id, key: (await adminCreateToken(gw, { user_id: user.id, name: "k" })).key };
}

const post = (key: string, path: string, body: unknown, signal?: AbortSignal) =>
  gw.fetch(path, { method: "POST", headers: bearer(key), body: JSON.stringify(body), ...(signal ? { signal } : {}) });

function transcribe(key: string, wav: Uint8Array, fields: Record<string, string> = {}, path = "/v1/audio/transcriptions") {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("file", new Blob([wav as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "audio.wav");
  return gw.fetch(path, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
}

/** Silence of `seconds` as an 8 kHz 16-bit mono WAV. */
const wavOf = (seconds: number) => encodeWav(new Int16Array(seconds * 8000), 8000);

/**
 * The request's one usage row (status 200 unless `statuses` allows more) costs `cost`; its
 * ledger is a hold and one settle returning the unspent part; no hold is left; the account's
 * balance fell by exactly `cost`; every account's ledger sums to its balance; the admin
 * usage API shows the cost in USD.
 */
async function expectSettledOnce(account: { id: string }, startMicros: number, requestId: string, cost: number, statuses = [200]) {
  const db = gw.database.db;
  await waitFor("the usage row", async () => (await db.selectFrom("usage_logs").select("id").where("user_id", "=", account.id).execute()).length > 0, 3_000);
  await sleep(100); // a second row or a second settlement would come late: give it the chance
  const rows = await db.selectFrom("usage_logs").selectAll().where("user_id", "=", account.id).execute();
  expect(rows.map((r) => ({ request: r.request_id, cost: r.cost_micros }))).toEqual([{ request: requestId, cost }]);
  expect(statuses).toContain(rows[0]!.status);
  const ledger = await db.selectFrom("ledger").select(["kind", "amount_micros"]).where("reference", "=", requestId).orderBy("id").execute();
  expect(ledger.length).toBe(2);
  expect(ledger[0]!.kind).toBe("hold");
  expect(ledger[1]).toEqual({ kind: "settle", amount_micros: -ledger[0]!.amount_micros - cost });
  expect((await db.selectFrom("holds").select("id").where("user_id", "=", account.id).execute()).length).toBe(0);
  const user = await db.selectFrom("users").select(["balance_micros", "total_spent_micros"]).where("id", "=", account.id).executeTakeFirstOrThrow();
  expect(user).toEqual({ balance_micros: startMicros - cost, total_spent_micros: cost });
  const report = await checkLedger(db);
  expect(report.problems).toEqual([]);
  const usage = await gw.admin("GET", `/v1/admin/usage?user_id=${account.id}`);
  expect(usage.body.usage.map((u: any) => u.cost)).toEqual([cost / 1e6]);
  return rows[0]!;
}

const START = 10_000_000;

describe("each modality is billed in its unit and settled once", () => {
  test("embeddings: 1000 USD per 1M tokens, two inputs of 3 + 5 estimated tokens → 8000 micro-USD", async () => {
    const account = await newAccount(START);
    const response = await post(account.key, "/v1/embeddings", { model: "demo-embed", input: ["hello world", "the quick brown fox"] });
    expect(response.status).toBe(200);
    expect((await response.json()).usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    const row = await expectSettledOnce(account, START, response.headers.get("x-request-id")!, 8000);
    expect({ endpoint: row.endpoint, model: row.model, prompt_tokens: row.prompt_tokens }).toEqual({ endpoint: "/v1/embeddings", model: "demo-embed", prompt_tokens: 8 });
  });

  test("embeddings as token IDs on the mock: each ID is one token, 3 + 2 → 5000 micro-USD, held and settled exactly", async () => {
    const account = await newAccount(START);
    const response = await post(account.key, "/v1/embeddings", { model: "demo-embed", input: [[101, 2023, 102], [7, 7]], dimensions: 4 });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    expect(body.data.map((item: { embedding: number[] }) => item.embedding.length)).toEqual([4, 4]);
    await expectSettledOnce(account, START, response.headers.get("x-request-id")!, 5000);
  });

  test("rerank: 0.05 USD per 1K documents (default), 4 documents → 200 micro-USD", async () => {
    const account = await newAccount(START);
    const response = await post(account.key, "/v1/rerank", { model: "demo-rerank", query: "river", documents: ["a river", "a city", "river bank", "bread"], top_n: 1 });
    expect(response.status).toBe(200);
    expect((await response.json()).results).toHaveLength(1);
    await expectSettledOnce(account, START, response.headers.get("x-request-id")!, 200);
  });

  const imageCases: [string, Record<string, unknown>, number][] = [
    ["no size or quality: 1024x1024/standard, 0.04", {}, 40_000],
    ["n=3 at 1024x1024/standard: 3 × 0.04", { n: 3, size: "1024x1024", quality: "standard" }, 120_000],
    ["1792x1024/hd: 0.12", { size: "1792x1024", quality: "hd" }, 120_000],
    ["n=2 at 1024x1792/standard: 2 × 0.08", { n: 2, size: "1024x1792" }, 160_000],
  ];
  // gpt-image-1 at its default (list) prices, on an openai channel.
  const gptImageCases: [string, Record<string, unknown>, number][] = [
    ["gpt-image-1, low at 1024x1024: 0.011", { model: "gpt-image-1", quality: "low" }, 11_000],
    ["gpt-image-1, high at 1536x1024: 0.25", { model: "gpt-image-1", quality: "high", size: "1536x1024" }, 250_000],
    ["gpt-image-1, auto at 1024x1536: the dearest listed there, 0.25", { model: "gpt-image-1", quality: "auto", size: "1024x1536" }, 250_000],
    ["gpt-image-1, no quality: standard (medium) at 1024x1024, 0.042", { model: "gpt-image-1" }, 42_000],
  ];
  for (const [label, extra, cost] of [...imageCases, ...gptImageCases]) {
    test(`images, ${label} → ${cost} micro-USD`, async () => {
      const account = await newAccount(START);
      const response = await post(account.key, "/v1/images/generations", { model: "demo-image", prompt: "a red kite", response_format: "b64_json", ...extra });
      expect(response.status).toBe(200);
      expect((await response.json()).data).toHaveLength((extra.n as number | undefined) ?? 1);
      await expectSettledOnce(account, START, response.headers.get("x-request-id")!, cost);
    }, 20_000);
  }

  test("speech: 1 USD per 1K characters counted as code points: 'héllo 😀 wörld' is 13 → 13000 micro-USD", async () => {
    const input = "héllo 😀 wörld";
    expect(input.length).toBe(14); // UTF-16 units: the emoji is two
    const account = await newAccount(START);
    const response = await post(account.key, "/v1/audio/speech", { model: "demo-tts", input, response_format: "wav" });
    expect(response.status).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(44);
    await expectSettledOnce(account, START, response.headers.get("x-request-id")!, 13_000);
  });

  test("transcription: a 90 s WAV at 0.006 USD a minute → 9000 micro-USD", async () => {
    const account = await newAccount(START);
    const response = await transcribe(account.key, wavOf(90), { model: "demo-transcribe" });
    expect(response.status).toBe(200);
    await expectSettledOnce(account, START, response.headers.get("x-request-id")!, 9000);
  });

  test("translation: a 25 s WAV → 25/60 × 6000 = 2500 micro-USD", async () => {
    const account = await newAccount(START);
    const response = await transcribe(account.key, wavOf(25), { model: "demo-transcribe" }, "/v1/audio/translations");
    expect(response.status).toBe(200);
    await expectSettledOnce(account, START, response.headers.get("x-request-id")!, 2500);
  });

  test("speech: a client that aborts the download halfway is still billed the whole text, once", async () => {
    const input = Array.from({ length: 700 }, (_, i) => ["river", "bridge", "morning", "light"][i % 4]).join(" ").slice(0, 4000);
    const chars = [...input].length;
    const account = await newAccount(START);
    const controller = new AbortController();
    const response = await post(account.key, "/v1/audio/speech", { model: "demo-tts", input, response_format: "wav" }, controller.signal);
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id")!;
    const first = (await response.body!.getReader().read()).value!;
    controller.abort();
    // The RIFF header announces the whole file: far more audio than one read.
    const fileBytes = new DataView(first.buffer, first.byteOffset, first.byteLength).getUint32(4, true) + 8;
    expect(fileBytes).toBeGreaterThan(first.byteLength);
    expect(fileBytes).toBeGreaterThan(4 * 1024 * 1024);
    await expectSettledOnce(account, START, requestId, chars * 1000, [200, 499]);
  }, 20_000);
});

describe("a balance that cannot cover the hold: 402 before any upstream call", () => {
  const wav3s = wavOf(3);
  const requests: [string, string, (key: string) => Promise<Response>][] = [
    ["embeddings", "/v1/embeddings", (key) => post(key, "/v1/embeddings", { model: "cnt-embed", input: "hello" })],
    ["rerank", "/v1/rerank", (key) => post(key, "/v1/rerank", { model: "cnt-rerank", query: "q", documents: ["a", "b"] })],
    ["images", "/v1/images/generations", (key) => post(key, "/v1/images/generations", { model: "cnt-image", prompt: "a kite" })],
    ["speech", "/v1/audio/speech", (key) => post(key, "/v1/audio/speech", { model: "cnt-tts", input: "hello there" })],
    ["transcription", "/v1/audio/transcriptions", (key) => transcribe(key, wav3s, { model: "cnt-transcribe" })],
  ];
  for (const [label, path, send] of requests) {
    test(`${label}: 402 insufficient_funds, the upstream never called, nothing held or charged`, async () => {
      const poor = await newAccount(1000);
      const callsBefore = upstreamCalls.length;
      await expectError(await send(poor.key), 402, "insufficient_funds");
      await gw.services.usage.flush();
      expect(upstreamCalls.length).toBe(callsBefore);
      const db = gw.database.db;
      const rows = await db.selectFrom("usage_logs").select(["status", "cost_micros"]).where("user_id", "=", poor.id).execute();
      expect(rows).toEqual([{ status: 402, cost_micros: 0 }]);
      expect((await db.selectFrom("holds").select("id").where("user_id", "=", poor.id).execute()).length).toBe(0);
      const ledger = await db.selectFrom("ledger").select("kind").where("user_id", "=", poor.id).execute();
      expect(ledger.map((l) => l.kind)).toEqual(["topup"]);
      const user = await db.selectFrom("users").select(["balance_micros", "total_spent_micros"]).where("id", "=", poor.id).executeTakeFirstOrThrow();
      expect(user).toEqual({ balance_micros: 1000, total_spent_micros: 0 });

      // Control: the same request from an account that can pay does reach the upstream.
      const rich = await newAccount(START);
      const served = await send(rich.key);
      expect(served.status).toBe(200);
      await served.arrayBuffer();
      expect(upstreamCalls.slice(callsBefore)).toEqual([path]);
    });
  }

  test("a balance of exactly the estimate is enough; one micro-USD less is not", async () => {
    // "hello" is 2 estimated tokens at 1000 USD per 1M: 2000 micro-USD, which the upstream also reports.
    const short = await newAccount(1999);
    await expectError(await post(short.key, "/v1/embeddings", { model: "cnt-embed", input: "hello" }), 402, "insufficient_funds");
    const exact = await newAccount(2000);
    const response = await post(exact.key, "/v1/embeddings", { model: "cnt-embed", input: "hello" });
    expect(response.status).toBe(200);
    await expectSettledOnce(exact, 2000, response.headers.get("x-request-id")!, 2000);
  });
});

describe("rate limits", () => {
  test("the free plan's 10 requests a minute apply to /v1/embeddings: the 11th gets 429 with x-ratelimit-* headers", async () => {
    const account = await newAccount(START, "free");
    for (let i = 0; i < 10; i++) {
      const ok = await post(account.key, "/v1/embeddings", { model: "demo-embed", input: `text ${i}` });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-ratelimit-limit-requests")).toBe("10");
      expect(ok.headers.get("x-ratelimit-remaining-requests")).toBe(String(9 - i));
    }
    const limited = await post(account.key, "/v1/embeddings", { model: "demo-embed", input: "one too many" });
    const message = await expectError(limited, 429, "rate_limit_error");
    expect(message).toContain("requests per minute");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("x-ratelimit-limit-requests")).toBe("10");
    expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(limited.headers.get("x-ratelimit-reset-requests")).not.toBeNull();
    // The refused request was neither logged nor charged.
    await gw.services.usage.flush();
    const rows = await gw.database.db.selectFrom("usage_logs").select("cost_micros").where("user_id", "=", account.id).execute();
    expect(rows.length).toBe(10);
    const spent = rows.reduce((sum, r) => sum + r.cost_micros, 0);
    const user = await gw.database.db.selectFrom("users").select("balance_micros").where("id", "=", account.id).executeTakeFirstOrThrow();
    expect(user.balance_micros).toBe(START - spent);
  });

  test("a key at its request limit is refused a transcription before its upload is read and probed: 429, not the 400 a file of no audio would get", async () => {
    const account = await newAccount(START, "free");
    for (let i = 0; i < 10; i++) expect((await post(account.key, "/v1/embeddings", { model: "demo-embed", input: `text ${i}` })).status).toBe(200);
    const callsBefore = upstreamCalls.length;
    // 8 MiB of no audio format: read and probed, it was a 400 whatever the limit.
    const notAudio = new Uint8Array(8 << 20).fill(7);
    const limited = await transcribe(account.key, notAudio, { model: "cnt-transcribe" });
    expect(await expectError(limited, 429, "rate_limit_error")).toContain("requests per minute");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    // The official SDK reads it as its own rate-limit error, not a broken connection.
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: account.key, maxRetries: 0 });
    const file = new File([wavOf(2) as Uint8Array<ArrayBuffer>], "speech.wav", { type: "audio/wav" });
    const thrown = await client.audio.transcriptions.create({ model: "cnt-transcribe", file }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(OpenAI.RateLimitError);
    expect(upstreamCalls.length).toBe(callsBefore);
  });
});
