import { startAnthropicUpstream, type AnthropicUpstream } from "../../test/helpers/anthropic-upstream.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../../test/helpers/gemini-upstream.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../../test/helpers/openai-upstream.ts";
import { startOpenAiMediaUpstream, type MediaUpstream } from "../../test/helpers/openai-media-upstream.ts";
import { waitFor, type GatewayProcess } from "../../test/billing/_support.ts";

/**
 * The soak's fixed world: one loopback upstream of each kind (the test helpers), the chat
 * models on them and on the built-in mock, media models, a rate-limited plan, and accounts
 * from rich (drawn on balance leases) to nearly empty (hold rows, 402s).
 */

/** Chat models, one per upstream kind. Their price moves during the soak among CHAT_PRICES. */
export const CHAT_MODELS = ["chaos-openai", "chaos-anthropic", "chaos-gemini", "chaos-mock"] as const;
export type ChatModel = (typeof CHAT_MODELS)[number];
export const EMBED_MODEL = "chaos-embed";
export const IMAGE_MODEL = "chaos-image";
export const SPEECH_MODEL = "chaos-tts";

/** Chat prices in USD per million tokens: whole micro-USD per token, so a cost is exactly in x a + out x b. */
export const CHAT_PRICES = [
  { input_per_million: 3, output_per_million: 15 },
  { input_per_million: 2, output_per_million: 10 },
  { input_per_million: 5, output_per_million: 25 },
] as const;
export type ChatPrice = (typeof CHAT_PRICES)[number];

const MEDIA_PRICES = [
  { model: EMBED_MODEL, mode: "embedding", input_per_million: 0.02 },
  { model: IMAGE_MODEL, mode: "image", per_image: 0.002 },
  { model: SPEECH_MODEL, mode: "speech", per_1k_characters: 0.015 },
];

/** A plan that 429s under the soak's load on every instance. */
const TIGHT_PLAN = { "chaos-tight": { requests_per_minute: 60, tokens_per_minute: 1_000_000 } };

/** Accounts by how much they start with, in USD, and their plan. */
const ACCOUNT_SPECS = [
  { name: "rich-1", balance: 500, plan: "enterprise" },
  { name: "rich-2", balance: 500, plan: "enterprise" },
  { name: "middle", balance: 2, plan: "enterprise" },
  { name: "poor-1", balance: 0.03, plan: "enterprise" },
  { name: "poor-2", balance: 0.03, plan: "enterprise" },
  { name: "poor-3", balance: 0.01, plan: "enterprise" },
  { name: "tight", balance: 50, plan: "chaos-tight" },
  { name: "free", balance: 50, plan: "free" },
] as const;

export interface Account {
  name: string;
  userId: string;
  key: string;
  /** Nearly empty accounts are the ones top-ups go to most. */
  poor: boolean;
}

export interface Upstreams {
  openai: OpenAiUpstream;
  anthropic: AnthropicUpstream;
  gemini: GeminiUpstream;
  media: MediaUpstream;
}

/** Starts the upstreams; streams pause between events so clients can hang up and instances die mid-stream. */
export async function startUpstreams(): Promise<Upstreams> {
  const paced = { chunkDelayMs: 4 };
  return {
    openai: await startOpenAiUpstream(paced),
    anthropic: await startAnthropicUpstream(paced),
    gemini: await startGeminiUpstream(paced),
    media: startOpenAiMediaUpstream({ speechChunks: 6, speechChunkDelayMs: 15 }),
  };
}

/** What the soaks need of each loopback upstream they start. */
interface LoopbackServer {
  close(): Promise<void>;
  reset(): void;
}

/** Stops every upstream of a soak. */
export async function closeUpstreams<T extends { [K in keyof T]: LoopbackServer }>(upstreams: T): Promise<void> {
  await Promise.all((Object.values(upstreams) as LoopbackServer[]).map((u) => u.close()));
}

/** Forgets what the upstreams recorded (they keep every request, which a long soak need not). */
export function trimUpstreams<T extends { [K in keyof T]: LoopbackServer }>(upstreams: T): void {
  for (const upstream of Object.values(upstreams) as LoopbackServer[]) upstream.reset();
}

/** An admin call through `gw` that must succeed (the soak's set-up); returns the answer's body. */
export async function adminOk(gw: GatewayProcess, method: string, path: string, body: unknown): Promise<any> {
  const answer = await gw.admin(method, path, body);
  if (answer.status >= 300) throw new Error(`set-up ${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Channels, prices, the tight plan and the accounts, through `gw`; returns the accounts. */
export async function buildWorld(gw: GatewayProcess, upstreams: Upstreams): Promise<Account[]> {
  const channels = [
    { name: "openai", type: "openai", base_url: upstreams.openai.url, models: ["chaos-openai"] },
    { name: "anthropic", type: "anthropic", base_url: upstreams.anthropic.url, api_key: "chaos-anthropic-key", models: ["chaos-anthropic"] },
    { name: "gemini", type: "gemini", base_url: upstreams.gemini.url, api_key: "chaos-gemini-key", models: ["chaos-gemini"] },
    { name: "mock", type: "mock", models: ["chaos-mock"] },
    { name: "media", type: "openai", base_url: upstreams.media.url, models: [EMBED_MODEL, IMAGE_MODEL, SPEECH_MODEL] },
  ];
  for (const channel of channels) await adminOk(gw, "POST", "/v1/admin/channels", channel);
  for (const model of CHAT_MODELS) await adminOk(gw, "POST", "/v1/admin/prices", { model, ...CHAT_PRICES[0] });
  for (const price of MEDIA_PRICES) await adminOk(gw, "POST", "/v1/admin/prices", price);
  await adminOk(gw, "PATCH", "/v1/admin/settings", { plans: TIGHT_PLAN });
  const accounts: Account[] = [];
  for (const spec of ACCOUNT_SPECS) {
    const user = await adminOk(gw, "POST", "/v1/admin/users", { email: `${spec.name}-${crypto.randomUUID()}@chaos.test`, balance: spec.balance, plan: spec.plan });
    const token = await adminOk(gw, "POST", "/v1/admin/tokens", { user_id: user.id, name: spec.name });
    accounts.push({ name: spec.name, userId: user.id, key: token.key, poor: spec.balance < 1 });
  }
  return accounts;
}

/** Waits until `gw` knows every account's key and every price (set up through another instance). */
export async function waitUntilReady(gw: GatewayProcess, accounts: readonly Account[]): Promise<void> {
  await waitFor("the prices", async () => (await gw.admin("GET", "/v1/admin/prices")).body.prices.filter((p: any) => p.model.startsWith("chaos-")).length === CHAT_MODELS.length + MEDIA_PRICES.length, 10_000);
  for (const account of accounts) {
    await waitFor(`the key of ${account.name}`, async () => (await gw.fetch("/v1/balance", { headers: { authorization: `Bearer ${account.key}` } })).status === 200, 10_000);
  }
}
