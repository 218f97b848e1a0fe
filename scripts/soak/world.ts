import { startAnthropicUpstream, type AnthropicUpstream } from "../../test/helpers/anthropic-upstream.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../../test/helpers/gemini-upstream.ts";
import { jsonFixture, replaySse } from "../../test/helpers/loopback-upstream.ts";
import { openAiErrorBody, startOpenAiUpstream, type OpenAiUpstream } from "../../test/helpers/openai-upstream.ts";
import { startOpenAiMediaUpstream, type MediaUpstream } from "../../test/helpers/openai-media-upstream.ts";
import { waitFor, type GatewayProcess } from "../../test/billing/_support.ts";
import { adminOk } from "../chaos/world.ts";
import type { Random } from "../chaos/random.ts";

/**
 * The soak's fixed world: loopback upstreams of the three chat wire formats and an
 * OpenAI-style media server (the test helpers), three OpenAI-compatible upstreams that
 * misbehave on purpose, a model per channel, prices, a rate-limited plan and three accounts.
 */

/** The first-byte and whole-answer limit the instances run with; the hanging upstream waits longer. */
export const FIRST_BYTE_LIMIT_MS = 1_500;
const HANG_MS = 3_000;

/** Chat models that are served whole: every 5xx on them is unexplained. */
export const GOOD_CHAT_MODELS = ["soak-openai", "soak-anthropic", "soak-gemini", "soak-mock"] as const;
/** Chat models whose upstream fails on purpose, and the 5xx each may cause (503: every channel cooling down). */
export const FAULTY_CHAT_MODELS = {
  /** Half of its answers are OpenAI's 500. */
  "soak-flaky": [502, 503],
  /** Answers after the first-byte limit has passed. */
  "soak-hang": [504, 503],
  /** Its streams break off after three events; whole answers are fine. */
  "soak-break": [502],
} as const satisfies Record<string, readonly number[]>;
export const CHAT_MODELS = [...GOOD_CHAT_MODELS, ...(Object.keys(FAULTY_CHAT_MODELS) as (keyof typeof FAULTY_CHAT_MODELS)[])];
export type ChatModel = (typeof CHAT_MODELS)[number];

export const MEDIA_MODELS = { embed: "soak-embed", rerank: "soak-rerank", image: "soak-image", speech: "soak-tts", transcribe: "soak-transcribe" } as const;

const CHAT_PRICE = { input_per_million: 3, output_per_million: 15 };
const MEDIA_PRICES = [
  { model: MEDIA_MODELS.embed, mode: "embedding", input_per_million: 0.02 },
  { model: MEDIA_MODELS.rerank, mode: "rerank", per_1k_documents: 0.05 },
  { model: MEDIA_MODELS.image, mode: "image", per_image: 0.002 },
  { model: MEDIA_MODELS.speech, mode: "speech", per_1k_characters: 0.015 },
  { model: MEDIA_MODELS.transcribe, mode: "transcription", per_minute: 0.006 },
];

/** Accounts: one that runs out (402s, top-ups bring it back now and then), one that 429s, one rich. */
const ACCOUNT_SPECS = [
  { name: "poor", balance: 0.05, plan: "enterprise" },
  { name: "limited", balance: 100, plan: "soak-tight" },
  { name: "rich", balance: 10_000, plan: "enterprise" },
] as const;
const TIGHT_PLAN = { "soak-tight": { requests_per_minute: 30, tokens_per_minute: 1_000_000 } };

export interface Account {
  name: string;
  userId: string;
  key: string;
}

export interface Upstreams {
  openai: OpenAiUpstream;
  anthropic: AnthropicUpstream;
  gemini: GeminiUpstream;
  media: MediaUpstream;
  flaky: OpenAiUpstream;
  hang: OpenAiUpstream;
  broken: OpenAiUpstream;
}

/** The soak's world once set up: its accounts and every secret a log line must not hold. */
export interface World {
  accounts: Account[];
  secrets: string[];
}

const PACED = { chunkDelayMs: 4 };
const SSE = { "content-type": "text/event-stream; charset=utf-8" };

/** Starts the upstreams; `random` decides which of the flaky one's answers fail. */
export async function startUpstreams(random: Random): Promise<Upstreams> {
  return {
    openai: await startOpenAiUpstream(PACED),
    anthropic: await startAnthropicUpstream(PACED),
    gemini: await startGeminiUpstream(PACED),
    media: startOpenAiMediaUpstream({ speechChunks: 6, speechChunkDelayMs: 10 }),
    flaky: await startOpenAiUpstream({
      script: (request) =>
        random.chance(0.5)
          ? Response.json(openAiErrorBody(500), { status: 500 })
          : request.body?.stream === true
            ? replaySse("openai-chat-stream.sse", { ...PACED, streamEnd: "end", byteChunkSize: 0 }, SSE)
            : Response.json(jsonFixture("openai-chat-completion.json")),
    }),
    hang: await startOpenAiUpstream({ delayMs: HANG_MS }),
    broken: await startOpenAiUpstream({ ...PACED, cutAfterEvents: 3, streamEnd: "abort" }),
  };
}

/** Channels (each with an API key of its own), prices, the tight plan and the accounts, through `gw`. */
export async function buildWorld(gw: GatewayProcess, upstreams: Upstreams): Promise<World> {
  const secret = (name: string) => `soak-secret-${name}-${crypto.randomUUID()}`;
  const channels = [
    { name: "openai", type: "openai", base_url: upstreams.openai.url, models: ["soak-openai"] },
    { name: "anthropic", type: "anthropic", base_url: upstreams.anthropic.url, models: ["soak-anthropic"] },
    { name: "gemini", type: "gemini", base_url: upstreams.gemini.url, models: ["soak-gemini"] },
    { name: "mock", type: "mock", models: ["soak-mock"] },
    { name: "media", type: "openai", base_url: upstreams.media.url, models: Object.values(MEDIA_MODELS) },
    { name: "flaky", type: "openai", base_url: upstreams.flaky.url, models: ["soak-flaky"] },
    { name: "hang", type: "openai", base_url: upstreams.hang.url, models: ["soak-hang"] },
    { name: "broken", type: "openai", base_url: upstreams.broken.url, models: ["soak-break"] },
  ].map((channel) => ({ ...channel, api_key: secret(channel.name) }));
  for (const channel of channels) await adminOk(gw, "POST", "/v1/admin/channels", channel);
  for (const model of CHAT_MODELS) await adminOk(gw, "POST", "/v1/admin/prices", { model, ...CHAT_PRICE });
  for (const price of MEDIA_PRICES) await adminOk(gw, "POST", "/v1/admin/prices", price);
  await adminOk(gw, "PATCH", "/v1/admin/settings", { plans: TIGHT_PLAN });
  const accounts: Account[] = [];
  for (const spec of ACCOUNT_SPECS) {
    const user = await adminOk(gw, "POST", "/v1/admin/users", { email: `${spec.name}@soak.test`, balance: spec.balance, plan: spec.plan });
    const token = await adminOk(gw, "POST", "/v1/admin/tokens", { user_id: user.id, name: spec.name });
    accounts.push({ name: spec.name, userId: user.id, key: token.key });
  }
  return { accounts, secrets: [...channels.map((c) => c.api_key), ...accounts.map((a) => a.key)] };
}

/** Waits until `gw` knows every account's key and every price (set up through another instance). */
export async function waitUntilReady(gw: GatewayProcess, accounts: readonly Account[]): Promise<void> {
  const priced = CHAT_MODELS.length + MEDIA_PRICES.length;
  await waitFor("the prices", async () => (await gw.admin("GET", "/v1/admin/prices")).body.prices.filter((p: any) => p.model.startsWith("soak-")).length === priced, 10_000);
  for (const account of accounts) {
    await waitFor(`the key of ${account.name}`, async () => (await gw.fetch("/v1/balance", { headers: { authorization: `Bearer ${account.key}` } })).status === 200, 10_000);
  }
}
