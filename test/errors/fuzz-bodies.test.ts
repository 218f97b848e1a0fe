/**
 * Seeded fuzzing of every JSON endpoint: valid bodies changed at any depth (wrong types, edge
 * numbers, odd strings, prototype keys, deleted and unknown fields), text a parser must refuse,
 * and wrong Content-Types. Whatever the body, the answer is a success or a 4xx in the caller
 * format's error shape, never a 5xx, a hang or a stream left open; a 4xx made no upstream call
 * unless the upstream itself refused; and the gateway still serves a valid body afterwards.
 *
 * FUZZ_SEED and FUZZ_CASES change the seed and the number of cases per endpoint; a failure
 * prints the seed, the case index and the body, which `fuzzCase` draws again alone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { startAnthropicUpstream, type AnthropicUpstream } from "../helpers/anthropic-upstream.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../helpers/gemini-upstream.ts";
import { fuzzCase, SCHEMA_WORDS, wordsOf, type FuzzCase } from "../helpers/fuzz-json.ts";
import { priceModel, startOpenAiMediaUpstream, type MediaUpstream } from "../helpers/openai-media-upstream.ts";
import { fuzzEndpoints, type FuzzEndpoint } from "./fuzz-endpoints.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20_240_917);
const CASES = Number(process.env.FUZZ_CASES ?? 150);
/** The longest a response may take, head and body, before the case counts as a hang. */
const ANSWER_TIMEOUT_MS = 10_000;
/** Every this many cases, and after the last, a valid body must still be served. */
const ALIVE_EVERY = 25;
/** Failures an endpoint reports before it stops (a hang costs the timeout each time). */
const MAX_FAILURES = 5;

interface UpstreamCall {
  url: string;
  /** The upstream's status; 0 when the call failed before one came. */
  status: number;
}

/** Every upstream call the gateway made, in order; the fuzz requests are sent one at a time. */
const upstreamCalls: UpstreamCall[] = [];
const recordingFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = input instanceof Request ? input.url : String(input);
  try {
    const response = await fetch(input, init);
    upstreamCalls.push({ url, status: response.status });
    return response;
  } catch (error) {
    upstreamCalls.push({ url, status: 0 });
    throw error;
  }
}) as typeof fetch;

let gw: TestGateway;
let apiKey: string;
let endpoints: FuzzEndpoint[];
let upstreams: { openai: OpenAiUpstream; anthropic: AnthropicUpstream; gemini: GeminiUpstream; media: MediaUpstream };

beforeAll(async () => {
  const [openai, anthropic, gemini] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream({ apiKey: "ak" }), startGeminiUpstream({ apiKey: "gk" })]);
  const media = startOpenAiMediaUpstream();
  upstreams = { openai, anthropic, gemini, media };
  gw = await startTestGateway({ fetch: recordingFetch });
  const channels = [
    { name: "fuzz openai", type: "openai", base_url: openai.url, api_key: "ok", models: ["fuzz-gpt"], model_map: { "fuzz-gpt": "gpt-4o-mini" } },
    { name: "fuzz anthropic", type: "anthropic", base_url: anthropic.url, api_key: "ak", models: ["fuzz-claude"], model_map: { "fuzz-claude": "claude-3-5-haiku-20241022" } },
    { name: "fuzz gemini", type: "gemini", base_url: gemini.url, api_key: "gk", models: ["fuzz-gemini"], model_map: { "fuzz-gemini": "gemini-2.0-flash" } },
    { name: "fuzz media", type: "openai", base_url: media.url, api_key: "mk", models: ["fuzz-embed", "fuzz-rerank", "fuzz-image", "fuzz-tts"], model_map: { "fuzz-embed": "text-embedding-3-small", "fuzz-rerank": "jina-reranker-v2", "fuzz-image": "dall-e-3", "fuzz-tts": "tts-1" } },
    { name: "fuzz patch target", type: "mock", models: ["fuzz-patch-target"] },
  ];
  const ids: string[] = [];
  for (const channel of channels) {
    const created = await gw.admin("POST", "/v1/admin/channels", channel);
    expect(created.status).toBe(201);
    ids.push(created.body.id);
  }
  await priceModel(gw, "fuzz-embed", "embeddings");
  await priceModel(gw, "fuzz-rerank", "rerank");
  await priceModel(gw, "fuzz-image", "images");
  await priceModel(gw, "fuzz-tts", "speech");
  const user = await gw.admin("POST", "/v1/admin/users", { email: "fuzz-caller@example.com", plan: "enterprise", balance: 10_000 });
  expect(user.status).toBe(201);
  const token = await gw.admin("POST", "/v1/admin/tokens", { user_id: user.body.id, name: "fuzz caller" });
  expect(token.status).toBe(201);
  apiKey = token.body.key;
  const target = await gw.admin("POST", "/v1/admin/users", { email: "fuzz-target@example.com", balance: 1 });
  const targetToken = await gw.admin("POST", "/v1/admin/tokens", { user_id: target.body.id, name: "fuzz target" });
  endpoints = fuzzEndpoints({ userId: target.body.id, tokenId: targetToken.body.id, channelId: ids.at(-1)! });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all(Object.values(upstreams ?? {}).map((upstream) => upstream.close()));
});

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** Sends one request and reads its body to the end, or throws when either takes too long. */
async function send(endpoint: FuzzEndpoint, model: string, body: string | Uint8Array<ArrayBuffer>, contentType: string | null): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${endpoint.caller === "api" ? apiKey : gw.managementKey}` };
  if (contentType !== null) headers["content-type"] = contentType;
  const signal = AbortSignal.timeout(ANSWER_TIMEOUT_MS);
  const response = await gw.fetch(endpoint.path(model), { method: endpoint.method, headers, body, signal });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", text };
}

/** What is wrong with an error answer on `path`, or null: the spec's shape as the caller's format writes it. */
function errorShapeProblem(path: string, answer: Answer): string | null {
  if (!answer.contentType.includes("application/json")) return `error content-type is '${answer.contentType}'`;
  let body: any;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return "error body is not JSON";
  }
  const anthropic = /^\/v1\/messages(\/|$)/.test(path);
  const gemini = path.startsWith("/v1beta/");
  const admin = path.startsWith("/v1/admin/");
  const top = Object.keys(body ?? {}).sort().join(",");
  if (top !== (anthropic ? "error,request_id,type" : "error")) return `top-level keys are ${top}`;
  if (anthropic && body.type !== "error") return "Anthropic error without type 'error'";
  const error = body.error ?? {};
  const keys = Object.keys(error).filter((key) => !(key === "param" && !admin && !gemini && !anthropic && typeof error.param === "string" && error.param !== ""));
  const expected = gemini ? "code,message,status,type" : "code,message,type";
  if (keys.sort().join(",") !== expected) return `error keys are ${keys.join(",")}`;
  if (gemini && !/^[A-Z_]+$/.test(error.status)) return `Gemini status is ${error.status}`;
  if (error.code !== answer.status) return `code ${error.code} is not the status`;
  if (typeof error.message !== "string" || error.message === "") return "empty message";
  if (typeof error.type !== "string" || error.type === "") return "empty type";
  return null;
}

/** What is wrong with the answer to one fuzz case, or null. */
function problemOf(path: string, answer: Answer, calls: UpstreamCall[]): string | null {
  const upstreamFailed = calls.some((call) => call.status === 0 || call.status >= 500);
  if (answer.status >= 500 && !upstreamFailed) return `status ${answer.status} with no upstream failure: ${answer.text.slice(0, 300)}`;
  if (answer.status >= 400) {
    const shape = errorShapeProblem(path, answer);
    if (shape) return `status ${answer.status}, ${shape}: ${answer.text.slice(0, 300)}`;
    // A body the gateway refuses reaches no upstream; one the upstream refused is relayed.
    if (answer.status < 500 && calls.some((call) => call.status > 0 && call.status < 400)) return `status ${answer.status} after an upstream call that succeeded`;
  }
  return null;
}

function report(endpoint: FuzzEndpoint, index: number, model: string, fuzz: FuzzCase, problem: string): string {
  const body = typeof fuzz.body === "string" ? fuzz.body : `bytes ${new TextDecoder().decode(fuzz.body)}`;
  return [
    `FUZZ_SEED=${SEED} endpoint '${endpoint.name}' case ${index} (${endpoint.method} ${endpoint.path(model)}, content-type ${fuzz.contentType})`,
    `  mutation: ${fuzz.label}`,
    `  body: ${body.length > 1500 ? `${body.slice(0, 1500)}... (${body.length} chars)` : body}`,
    `  problem: ${problem}`,
  ].join("\n");
}

/** Puts back what a settings case may have changed, so later requests are served as before. */
async function restoreSettings(): Promise<void> {
  const restored = await gw.admin("PATCH", "/v1/admin/settings", { features: { maintenance_mode: false }, rate_limits: { requests_per_minute: 10, tokens_per_minute: 100_000 }, allow_unpriced_models: true });
  expect(restored.status).toBe(200);
}

/** A valid body of the endpoint is still served (the mock model, so no upstream is involved). */
async function expectStillServed(endpoint: FuzzEndpoint, n: number): Promise<void> {
  const model = endpoint.models[0]!;
  const answer = await send(endpoint, model, JSON.stringify(endpoint.bases[0]!(model, n)), "application/json");
  if (answer.status >= 300) throw new Error(`${endpoint.name}: a valid body got ${answer.status} after the fuzz cases: ${answer.text.slice(0, 300)}`);
}

/** Sends one fuzz case: its status (0 without a complete answer) and what is wrong with the answer, or null. */
async function runCase(endpoint: FuzzEndpoint, model: string, fuzz: FuzzCase): Promise<{ status: number; problem: string | null }> {
  const callsBefore = upstreamCalls.length;
  try {
    const answer = await send(endpoint, model, fuzz.body, fuzz.contentType);
    return { status: answer.status, problem: problemOf(endpoint.path(model), answer, upstreamCalls.slice(callsBefore)) };
  } catch (error) {
    return { status: 0, problem: `no complete answer within ${ANSWER_TIMEOUT_MS} ms: ${error instanceof Error ? error.message : String(error)}` };
  }
}

const ENDPOINT_NAMES = fuzzEndpoints({ userId: "", tokenId: "", channelId: "" }).map((endpoint) => endpoint.name);

test("control: every valid body the fuzzer starts from is served, for each model", async () => {
  const refused: string[] = [];
  for (const endpoint of endpoints) {
    for (const [index, base] of endpoint.bases.entries()) {
      for (const model of endpoint.models) {
        const answer = await send(endpoint, model, JSON.stringify(base(model, 10_000 + index)), "application/json");
        if (answer.status >= 300) refused.push(`${endpoint.name} base ${index} model '${model}': ${answer.status} ${answer.text.slice(0, 300)}`);
      }
    }
    if (endpoint.name === "PATCH settings") await restoreSettings();
  }
  expect(refused).toEqual([]);
});

for (const [position, name] of ENDPOINT_NAMES.entries()) {
  test(`fuzz ${name}: ${CASES} mutated bodies, never a 5xx, a hang or a malformed error`, async () => {
    const endpoint = endpoints[position]!;
    const words = [...new Set([...SCHEMA_WORDS, ...endpoint.bases.flatMap((base) => endpoint.models.flatMap((model) => [...wordsOf(base(model, 0))]))])];
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let index = 0; index < CASES && failures.length < MAX_FAILURES; index++) {
      // Models in turn, and each valid body with each model.
      const model = endpoint.models[index % endpoint.models.length]!;
      const base = endpoint.bases[Math.floor(index / endpoint.models.length) % endpoint.bases.length]!;
      const fuzz = fuzzCase(SEED, name, index, base(model, index + 1), words);
      const { status, problem } = await runCase(endpoint, model, fuzz);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (problem) failures.push(report(endpoint, index, model, fuzz, problem));
      if (name === "PATCH settings") await restoreSettings();
      if ((index + 1) % ALIVE_EVERY === 0) await expectStillServed(endpoint, CASES + index);
    }
    // How far the cases got (a run of nothing but 400s would test only the first check).
    if (process.env.FUZZ_VERBOSE) console.log(`${name}: statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    if (failures.length > 0) console.error(failures.join("\n\n"));
    expect(failures).toEqual([]);
    await expectStillServed(endpoint, CASES * 2);
  }, 120_000);
}
