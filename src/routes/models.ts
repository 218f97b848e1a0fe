import { Hono, type Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { Principal } from "../auth/key-cache.ts";
import type { Permission } from "../auth/permissions.ts";
import { requireApiKey } from "../auth/authenticate.ts";
import { badRequest, GatewayError } from "../errors/gateway-error.ts";
import type { ModelMode } from "../pricing/price.ts";
import type { Services } from "../services.ts";
import { byId, cursorPage } from "./model-pages.ts";
import { positiveInteger } from "../admin/paging.ts";
import { refusedUnpriced } from "../billing/hold-funds.ts";
import { GEMINI_OWN_VERSIONS } from "../lib/gemini-api-versions.ts";

/** The permission a model of each mode needs. */
const PERMISSION_OF_MODE: Record<ModelMode, Permission> = {
  chat: "chat",
  embedding: "embeddings",
  rerank: "rerank",
  image: "images",
  speech: "audio",
  transcription: "audio",
};

/** A model the calling key may use: its ID, mode, first channel's kind and when its first channel was created (ms). */
interface UsableModel {
  id: string;
  mode: ModelMode;
  owner: string;
  created: number;
}

/** The model, or null when the caller may not use it (a model every request for which is refused for want of a price included). */
function usableModel(services: Services, principal: Principal, id: string): UsableModel | null {
  const channels = services.channels.candidatesFor(id);
  if (channels.length === 0) return null;
  if (principal.models !== null && !principal.models.has(id)) return null;
  if (refusedUnpriced(services, id)) return null;
  const mode = services.prices.get(id)?.mode ?? "chat";
  if (!principal.permissions.has(PERMISSION_OF_MODE[mode])) return null;
  return { id, mode, owner: channels[0]!.type, created: Math.min(...channels.map((c) => c.createdAt)) };
}

function usableModels(services: Services, principal: Principal): UsableModel[] {
  return [...services.channels.models]
    .sort()
    .map((id) => usableModel(services, principal, id))
    .filter((m) => m !== null);
}

function notFound(model: string): GatewayError {
  return new GatewayError(404, `The model '${model}' does not exist or you do not have access to it`);
}

/** A spec 2.5 model record. */
function openAiModel(model: UsableModel) {
  return { id: model.id, object: "model", created: Math.floor(model.created / 1000), owned_by: model.owner, mode: model.mode };
}

/**
 * The model record Anthropic's models API returns, which @anthropic-ai/sdk's models.list and
 * retrieve read: every field its ModelInfo type requires. A model the gateway serves is
 * active; what it does not know of the upstream's model (its line, limits and capabilities)
 * is null, as Anthropic's API leaves what it does not state.
 */
function anthropicModel(model: UsableModel) {
  return {
    type: "model",
    id: model.id,
    display_name: model.id,
    created_at: new Date(model.created).toISOString(),
    lifecycle: "active",
    deprecated_at: null,
    retires_at: null,
    line: null,
    max_input_tokens: null,
    max_tokens: null,
    capabilities: null,
  };
}

/** The /v1beta/models/{model}:{method} actions served for a model of each mode. */
const GEMINI_METHODS: Partial<Record<UsableModel["mode"], string[]>> = {
  chat: ["generateContent", "streamGenerateContent", "countTokens"],
  embedding: ["embedContent", "batchEmbedContents"],
};

/** The model record Gemini's models API returns, which @google/genai's models.list and get read. */
function geminiModel(model: UsableModel) {
  return {
    name: `models/${model.id}`,
    displayName: model.id,
    supportedGenerationMethods: GEMINI_METHODS[model.mode] ?? [],
  };
}

/** Anthropic's page sizes for GET /v1/models: 20 unless `limit` says, at most 1000. */
const ANTHROPIC_PAGE = { fallback: 20, max: 1000 };
/** Gemini's page sizes for models.list: 50 unless `pageSize` says; a larger one is cut to 1000, not refused, as Gemini does. */
const GEMINI_PAGE = { fallback: 50, max: 1000 };

/** A model's place in Anthropic's order. */
type Released = Pick<UsableModel, "id" | "created">;

/**
 * Anthropic's order, "more recently released models listed first": by `created` (what the
 * gateway knows of a release: when it first offered the model, as `created_at` says), newest
 * first, then by ID.
 */
const newestFirst = (a: Released, b: Released) => b.created - a.created || byId(a, b.id);

/**
 * A cursor's place in Anthropic's order: the listed model it names. One the list does not
 * hold (no longer served, or no longer this key's) has no place, unlike an ID in ID order, so
 * the cursor is refused rather than a page guessed that would skip or repeat models; a model
 * the key may not use gets the same answer as one that does not exist, as a lookup does.
 */
function cursorPlace(c: Context<AppEnv>, models: readonly UsableModel[], param: "after_id" | "before_id"): Released | undefined {
  const id = c.req.query(param) || undefined;
  if (id === undefined) return undefined;
  const model = models.find((m) => m.id === id);
  if (!model) throw badRequest(`Invalid '${param}': '${id}' is not a model this key may use`, param);
  return model;
}

/** Anthropic's list, newest first: a page by `limit`, `after_id` and `before_id`, which the SDK's paging follows either way. */
function anthropicList(c: Context<AppEnv>, models: readonly UsableModel[]) {
  const limit = positiveInteger("limit", c.req.query("limit"), ANTHROPIC_PAGE.fallback, ANTHROPIC_PAGE.max);
  const cursor = { limit, after: cursorPlace(c, models, "after_id"), before: cursorPlace(c, models, "before_id") };
  const { items, hasMore } = cursorPage([...models].sort(newestFirst), cursor, newestFirst);
  return { data: items.map(anthropicModel), has_more: hasMore, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null };
}

/** Gemini's list: a page by `pageSize`, the next one named by `nextPageToken` (the last model's ID), which the genai pager sends back as `pageToken`. */
function geminiList(c: Context<AppEnv>, models: readonly UsableModel[]) {
  const limit = Math.min(positiveInteger("pageSize", c.req.query("pageSize"), GEMINI_PAGE.fallback, Number.MAX_SAFE_INTEGER), GEMINI_PAGE.max);
  const { items, hasMore } = cursorPage(models, { limit, after: c.req.query("pageToken") || undefined }, byId);
  return { models: items.map(geminiModel), ...(hasMore ? { nextPageToken: items.at(-1)!.id } : {}) };
}

/** The Anthropic SDK sends this header on every call; OpenAI clients do not. */
const speaksAnthropic = (c: Context<AppEnv>) => c.req.header("anthropic-version") !== undefined;
/** The genai SDK with `apiVersion: "v1"` lists models under /v1, and sends its key in its own header. */
const speaksGemini = (c: Context<AppEnv>) => c.req.header("x-goog-api-key") !== undefined;

/**
 * GET /v1/models and /v1/models/{id} (spec 4.4): what the calling key may use, in OpenAI's
 * shape, or Anthropic's for the Anthropic SDK; GET /v1beta/models and /v1beta/models/{id}
 * (and the same under /v1alpha) in Gemini's shape for the genai SDK.
 */
export function modelRoutes(services: Services) {
  const auth = requireApiKey(services);
  const find = (c: Context<AppEnv>, id: string) => {
    const model = usableModel(services, c.get("principal"), id);
    if (!model) throw notFound(id);
    return model;
  };
  // Gemini names a model "models/{id}"; the SDK sends either form.
  const findGemini = (c: Context<AppEnv>) => find(c, (c.req.param("model") ?? "").replace(/^models\//, ""));
  const routes = new Hono<AppEnv>()
    .get("/v1/models", auth, (c) => {
      const models = usableModels(services, c.get("principal"));
      if (speaksAnthropic(c)) return c.json(anthropicList(c, models));
      if (speaksGemini(c)) return c.json(geminiList(c, models));
      return c.json({ object: "list", data: models.map(openAiModel) });
    })
    .get("/v1/models/:model{.+}", auth, (c) => {
      if (speaksGemini(c)) return c.json(geminiModel(findGemini(c)));
      const model = find(c, c.req.param("model"));
      return c.json(speaksAnthropic(c) ? anthropicModel(model) : openAiModel(model));
    });
  // Under Gemini's own versions every caller is Gemini's.
  for (const version of GEMINI_OWN_VERSIONS) {
    routes
      .get(`/${version}/models`, auth, (c) => c.json(geminiList(c, usableModels(services, c.get("principal")))))
      .get(`/${version}/models/:model{.+}`, auth, (c) => c.json(geminiModel(findGemini(c))));
  }
  return routes;
}
