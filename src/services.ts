import type { Kysely } from "kysely";
import type { Config } from "./config.ts";
import type { Database } from "./db/schema.ts";
import type { SyncSql } from "./db/sync-sql.ts";
import type { CreateTempUpload } from "./uploads/temp-upload.ts";
import type { Logger } from "./lib/logger.ts";
import { KeyCache } from "./auth/key-cache.ts";
import { LastUsedTracker } from "./auth/last-used.ts";
import { ChannelRegistry } from "./channels/channel-registry.ts";
import { PriceStore } from "./pricing/price-store.ts";
import { SettingsStore } from "./settings/settings-store.ts";
import { ChangeFeed } from "./state/change-feed.ts";
import { applyChanges } from "./state/apply-changes.ts";
import { UsageWriter } from "./usage/usage-writer.ts";
import { ChatDispatcher } from "./dispatch/chat-dispatcher.ts";
import { MediaDispatcher } from "./dispatch/media-dispatcher.ts";
import type { UpstreamDeps } from "./dispatch/serve-through-channels.ts";
import { ChannelBreaker } from "./dispatch/channel-breaker.ts";
import { HoldBatcher } from "./billing/hold-batcher.ts";
import { LeaseBook } from "./billing/lease-book.ts";
import { WriteTurn } from "./db/write-turn.ts";
import { DatabaseWritable } from "./db/database-writable.ts";
import { RateLimiter } from "./limits/rate-limiter.ts";
import { RateExchange } from "./limits/rate-exchange.ts";
import { InstanceRegistry, type ProcessIdentity } from "./billing/instance-registry.ts";
import { KeptResponses } from "./state/kept-responses.ts";
import { KeptThinking } from "./state/kept-thinking.ts";

/** What the gateway is given from outside: injected so tests pass their own. */
export interface GatewayDeps {
  db: Kysely<Database>;
  /** Prepared statements on the database's connection, for billing's batch writes. */
  sql: SyncSql;
  config: Config;
  now: () => number;
  fetch: typeof fetch;
  log: Logger;
  /** This process, as the runtime sees it: to recognise crashed siblings and release their holds. */
  identity: ProcessIdentity;
  /** Makes the temp file an audio upload is spooled to (the runtime's file system). */
  createTempUpload: CreateTempUpload;
  /**
   * What a response body that fails midway (streamed audio) is errored with, so the server
   * drops the connection rather than end the body as if whole. Servers differ: Bun prints
   * any reason as a stack trace (its host gives none), and @hono/node-server ends a body
   * errored without one cleanly. Left out: the error itself.
   */
  bodyErrorReason?(error: unknown): unknown;
}

/** The gateway's long-lived parts, built once and shared by every route. */
export interface Services extends GatewayDeps {
  keys: KeyCache;
  lastUsed: LastUsedTracker;
  settings: SettingsStore;
  channels: ChannelRegistry;
  prices: PriceStore;
  usage: UsageWriter;
  chat: ChatDispatcher;
  media: MediaDispatcher;
  breaker: ChannelBreaker;
  holds: HoldBatcher;
  rateLimiter: RateLimiter;
  /** Charges this instance's rate limits with what other instances sharing the database admitted. */
  rateExchange: RateExchange;
  instance: InstanceRegistry;
  /** Whether the machine lets the gateway write its database; model requests are refused while not. */
  writable: DatabaseWritable;
  changes: ChangeFeed;
  /** Recent Responses of the Responses API, in the database, for previous_response_id, item_reference and retrieval. */
  keptResponses: KeptResponses;
  /** Anthropic's thinking of answers that called tools, kept for callers of other formats (ChatDispatcher). */
  keptThinking: KeptThinking;
  /** True once shutdown began: /ready answers 503. */
  draining: boolean;
}

/** Builds the services and loads their in-memory state from the database. */
export async function createServices(deps: GatewayDeps): Promise<Services> {
  const keys = new KeyCache(deps.db);
  const lastUsed = new LastUsedTracker();
  const settings = new SettingsStore(deps.db);
  const breaker = new ChannelBreaker(deps.config.breakerFailures, deps.config.breakerCooldownMs, deps.now, deps.log);
  const channels = new ChannelRegistry(deps.db, (channelId) => breaker.forget(channelId));
  const prices = new PriceStore(deps.db);
  const reload = async () => {
    keys.clear();
    await Promise.all([settings.load(), channels.load(), prices.load()]);
  };
  const writable = new DatabaseWritable(deps.log);
  const instance: InstanceRegistry = new InstanceRegistry(deps.db, deps.identity, deps.now, { onDeclaredDead: () => leases.forgetAll(), writable });
  // Holds, settlements and kept Responses queued in one event-loop turn share one commit.
  const writeTurn = new WriteTurn(deps.db, deps.sql, writable);
  const leases = new LeaseBook(() => instance.id, deps.now);
  const rateLimiter = new RateLimiter(deps.now);
  const rateExchange = new RateExchange(deps.db, rateLimiter, instance, deps.now);
  const upstreams: UpstreamDeps = {
    channels,
    breaker,
    fetch: deps.fetch,
    now: deps.now,
    upstreamTimeoutMs: deps.config.upstreamTimeoutMs,
    firstByteTimeoutMs: deps.config.firstByteTimeoutMs,
    wholeAnswerTimeoutMs: deps.config.wholeAnswerTimeoutMs,
    streamIdleTimeoutMs: deps.config.streamIdleTimeoutMs,
    maxUpstreamBodyBytes: deps.config.maxUpstreamBodyBytes,
  };
  const keptThinking = new KeptThinking(writeTurn, deps.sql, deps.now, deps.log);
  const services: Services = {
    ...deps,
    keys,
    lastUsed,
    settings,
    channels,
    prices,
    usage: new UsageWriter(writeTurn, lastUsed, leases, deps.log),
    breaker,
    instance,
    writable,
    holds: new HoldBatcher(writeTurn, leases, () => instance.id, deps.now, deps.log),
    rateLimiter,
    rateExchange,
    chat: new ChatDispatcher(upstreams, keptThinking),
    media: new MediaDispatcher(upstreams, deps.log, deps.bodyErrorReason),
    changes: new ChangeFeed(deps.db, {
      reload,
      changed: (changes) => applyChanges({ keys, channels, prices, settings, reloadAll: reload }, changes),
      instancesChanged: () => instance.countPeers(),
      afterPoll: () => rateExchange.run(),
    }),
    keptResponses: new KeptResponses(writeTurn, deps.sql, deps.now, deps.log, deps.config.keptResponsesMaxChars),
    keptThinking,
    draining: false,
  };
  // The counter first: a change another instance makes while this one loads is then seen
  // at the first poll. Read after loading, it would be taken as already loaded, and never be.
  await services.changes.init();
  await reload();
  await rateExchange.seed();
  await instance.register();
  await instance.releaseOrphanedHolds();
  return services;
}
