import type { Generated, Insertable, Selectable } from "kysely";

/**
 * Table row types. Money columns end in `_micros` (integer micro-USD); times are Unix
 * milliseconds; JSON columns end in `_json`.
 */
export interface Database {
  schema_migrations: { id: string; applied_at: number };
  users: UsersTable;
  tokens: TokensTable;
  channels: ChannelsTable;
  prices: PricesTable;
  ledger: LedgerTable;
  usage_logs: UsageLogsTable;
  settings: { key: string; value_json: string };
  idempotency_records: IdempotencyTable;
  holds: HoldsTable;
  instances: InstancesTable;
  balance_leases: BalanceLeasesTable;
  rate_windows: RateWindowsTable;
  admin_changes: AdminChangesTable;
  usage_days: UsageDaysTable;
  kept_responses: KeptResponsesTable;
  kept_response_items: { item_id: string; response_id: string };
  kept_responses_total: { id: number; bytes: number };
  kept_thinking: KeptThinkingTable;
}

/** What one admin write changed, under the change counter's value after it. */
export interface AdminChangesTable {
  seq: number;
  kind: string;
  /** The channel, token, user or model ID; '' for settings and for a change of everything. */
  subject: string;
}

export interface HoldsTable {
  /** The request id the funds are held for. */
  id: string;
  user_id: string;
  amount_micros: number;
  instance_id: string;
  created_at: number;
}

/** The part of an account's balance one instance has reserved for the holds it grants in memory. */
export interface BalanceLeasesTable {
  user_id: string;
  instance_id: string;
  /** Reserved and not yet spent: what the instance may still grant, plus its draws in flight. */
  amount_micros: number;
  /** 1 while the instance grants holds from it; 0 once all that is left is in flight. */
  open: number;
  updated_at: number;
}

/** What one instance admitted from one rate-limit bucket in the last minute (migration 017). */
export interface RateWindowsTable {
  instance_id: string;
  /** `user:<id>` or `key:<id>`, as the rate limiter names its buckets. */
  bucket: string;
  updated_at: number;
  /**
   * `{"base":slot,"requests":[offset,n,...],"tokens":[offset,n,...]}`: amounts by 100 ms slot
   * (ms / 100), each slot written as its offset from `base` (src/limits/rate-window-rows.ts).
   */
  windows: string;
}

export interface InstancesTable {
  id: string;
  host: string;
  pid: number;
  started_at: number;
  heartbeat_at: number;
}

export interface UsersTable {
  id: string;
  email: string;
  plan: string;
  status: "active" | "suspended";
  balance_micros: number;
  total_spent_micros: number;
  created_at: number;
  updated_at: number;
}

export interface TokensTable {
  id: string;
  user_id: string;
  name: string;
  role: "user" | "management";
  key_hash: string;
  key_prefix: string;
  permissions_json: string;
  /** null: every model; otherwise a JSON array of allowed model IDs. */
  models_json: string | null;
  status: "active" | "disabled" | "revoked";
  expires_at: number | null;
  created_at: number;
  last_used: number | null;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
}

export interface ChannelsTable {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  api_key: string | null;
  models_json: string;
  model_map_json: string;
  priority: number;
  weight: number;
  status: "active" | "disabled" | "cooling";
  created_at: number;
  updated_at: number;
}

export interface PricesTable {
  model: string;
  mode: string;
  input_per_million_micros: number | null;
  output_per_million_micros: number | null;
  cached_input_per_million_micros: number | null;
  /** Tokens written to the prompt cache with the 5-minute lifetime; null: at the input price. */
  cache_write_per_million_micros: number | null;
  /** Tokens written with the 1-hour lifetime; null: at the 5-minute write price. */
  cache_write_1h_per_million_micros: number | null;
  per_image_micros: number | null;
  per_1k_characters_micros: number | null;
  per_minute_micros: number | null;
  per_1k_documents_micros: number | null;
  /** Per 1,000 searches of a server-side web search tool; null: free. */
  per_1k_web_searches_micros: number | null;
  /** Per 1,000 rerank searches (a query with up to 100 documents); null: not priced by search. */
  per_1k_searches_micros: number | null;
  /** Per-image micro-USD by "<size>/<quality>"; null: per_image_micros for every size. */
  image_prices_json: string | null;
  /** A long-prompt tier as JSON, micro-USD ({"aboveTokens":200000,"inputPerMillion":2500000,...}); null: no tier. */
  long_prompt_json: string | null;
  updated_at: number;
}

export interface LedgerTable {
  id: Generated<number>;
  user_id: string;
  kind: "topup" | "hold" | "settle" | "refund" | "adjust";
  amount_micros: number;
  balance_after_micros: number;
  reference: string | null;
  created_at: number;
}

export interface UsageLogsTable {
  id: string;
  request_id: string;
  user_id: string;
  token_id: string;
  model: string;
  endpoint: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  status: number;
  latency_ms: number;
  channel_id: string | null;
  stream: number;
  created_at: number;
}

/** Usage rows per UTC day (`created_at` / 86,400,000), kept by triggers on usage_logs. */
export interface UsageDaysTable {
  day: number;
  rows: number;
}

/** A Response of the Responses API kept for its owner (src/state/kept-responses.ts). */
export interface KeptResponsesTable {
  /** The Response's id (`resp_...`). */
  id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  /** The UTF-8 size of `kept_json`, which the bound on what is kept counts. */
  bytes: number;
  /** The Response as its caller got it, its own input items and the id it continued. */
  kept_json: string;
}

/** An answer's Anthropic thinking, kept for the turn that answers its tool calls (src/state/kept-thinking.ts). */
export interface KeptThinkingTable {
  /** The answer's owner; with the call id, the key. */
  user_id: string;
  /** The answer's first tool call's id, which the caller sends back with that call. */
  tool_call_id: string;
  expires_at: number;
  /** The answer's thinking blocks, in order (SignedThinking[]). */
  blocks_json: string;
}

export interface IdempotencyTable {
  key: string;
  scope: string;
  request_hash: string;
  response_json: string;
  created_at: number;
}

export type UserRow = Selectable<UsersTable>;
export type TokenRow = Selectable<TokensTable>;
export type ChannelRow = Selectable<ChannelsTable>;
export type PriceRow = Selectable<PricesTable>;
export type UsageLogInsert = Insertable<UsageLogsTable>;
