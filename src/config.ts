import * as v from "valibot";
import type { CorsOrigins } from "./middleware/cors.ts";

/** Contract variant of spec section 4.1: A fills more chat defaults and serves /v1/balance. */
export type Variant = "A" | "B";

const integerFromEnv = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.transform(Number),
    v.integer(),
    v.minValue(min),
    v.maxValue(max),
  );

const ConfigSchema = v.object({
  // Checked here, before the first start creates a database and prints its keys, not by listen().
  PORT: integerFromEnv(8080, 0, 65_535),
  HOST: v.optional(v.string(), "0.0.0.0"),
  DATABASE_URL: v.optional(v.pipe(v.string(), v.minLength(1)), "file:./data/gateway.db"),
  DATABASE_AUTH_TOKEN: v.optional(v.string()),
  GATEWAY_MANAGEMENT_KEY: v.optional(v.pipe(v.string(), v.minLength(16, "GATEWAY_MANAGEMENT_KEY must be at least 16 characters"))),
  GATEWAY_VARIANT: v.optional(v.picklist(["A", "B"]), "A"),
  GATEWAY_DEMO: v.optional(v.picklist(["0", "1"]), "1"),
  GATEWAY_MAX_BODY_BYTES: integerFromEnv(10 * 1024 * 1024, 1024),
  GATEWAY_MAX_UPLOAD_BYTES: integerFromEnv(25 * 1024 * 1024, 1024),
  GATEWAY_BODY_TIMEOUT_MS: integerFromEnv(120_000, 1),
  GATEWAY_MAX_TOPUP_USD: integerFromEnv(100_000, 1),
  GATEWAY_DRAIN_TIMEOUT_MS: integerFromEnv(10_000, 0),
  GATEWAY_UPSTREAM_TIMEOUT_MS: integerFromEnv(600_000, 1),
  GATEWAY_FIRST_BYTE_TIMEOUT_MS: integerFromEnv(300_000, 1),
  GATEWAY_WHOLE_ANSWER_TIMEOUT_MS: integerFromEnv(600_000, 1),
  GATEWAY_STREAM_IDLE_TIMEOUT_MS: integerFromEnv(300_000, 1),
  GATEWAY_MAX_UPSTREAM_BODY_BYTES: integerFromEnv(64 * 1024 * 1024, 1024),
  GATEWAY_BREAKER_FAILURES: integerFromEnv(3, 1),
  GATEWAY_BREAKER_COOLDOWN_MS: integerFromEnv(30_000, 1),
  GATEWAY_CACHE_POLL_MS: integerFromEnv(1_000, 50),
  GATEWAY_LOG_REQUESTS: v.optional(v.picklist(["0", "1"]), "0"),
  GATEWAY_KEPT_RESPONSES_MAX_CHARS: integerFromEnv(256 * 1024 * 1024, 1024),
  GATEWAY_CORS_ORIGINS: v.optional(
    v.pipe(v.string(), v.regex(/^(\*|none|https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)$/i, "must be *, none, or a comma-separated list of origins (https://app.example.com)")),
    "*",
  ),
});

/** Runtime configuration, read once from the environment at start. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  databaseAuthToken?: string;
  managementKey?: string;
  variant: Variant;
  demo: boolean;
  maxBodyBytes: number;
  /** Largest audio file accepted by the transcription endpoints (streamed to a temp file). */
  maxUploadBytes: number;
  /**
   * How long a client may take to send its request body: a JSON body must have come whole
   * within it, and an upload may go no longer than it without a byte. Past it, a 408.
   */
  bodyTimeoutMs: number;
  /** Largest single top-up accepted, in micro-USD. */
  maxTopupMicros: number;
  drainTimeoutMs: number;
  /** Overall deadline for one upstream call, first byte to last. */
  upstreamTimeoutMs: number;
  /** From sending a streamed request upstream to its response headers (connecting included). */
  firstByteTimeoutMs: number;
  /**
   * The same wait for a request whose answer is read whole: providers send its headers only
   * once the whole answer is generated, which takes a reasoning model minutes.
   */
  wholeAnswerTimeoutMs: number;
  /** Longest silence allowed between two chunks of an upstream stream. */
  streamIdleTimeoutMs: number;
  /**
   * The most of an upstream's answer held in memory at once: the largest body read whole,
   * and the largest single event of a stream. An upstream past it fails like a malformed one.
   */
  maxUpstreamBodyBytes: number;
  /** Consecutive retryable failures that cool a channel down. */
  breakerFailures: number;
  /** First cooldown; it doubles on each failed probe, up to 10 minutes. */
  breakerCooldownMs: number;
  /** How often other instances' admin changes are looked for (cache invalidation). */
  cachePollMs: number;
  /** One access log line per request, written when its response head is ready. */
  logRequests: boolean;
  /** The most JSON text of kept Responses, in characters, for every instance on the database together; the oldest go first past it. */
  keptResponsesMaxChars: number;
  /** Which origins a browser may call the gateway from (CORS). */
  corsOrigins: CorsOrigins;
}

/** Parses the environment into a Config; throws a readable message naming the bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const picked = Object.fromEntries(
    Object.keys(ConfigSchema.entries).map((name) => [name, env[name] === "" ? undefined : env[name]]),
  );
  const result = v.safeParse(ConfigSchema, picked);
  if (!result.success) {
    const issue = result.issues[0];
    const name = issue.path?.map((p) => String(p.key)).join(".") ?? "environment";
    throw new Error(`invalid configuration: ${name}: ${issue.message}`);
  }
  const e = result.output;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseAuthToken: e.DATABASE_AUTH_TOKEN,
    managementKey: e.GATEWAY_MANAGEMENT_KEY,
    variant: e.GATEWAY_VARIANT,
    demo: e.GATEWAY_DEMO === "1",
    maxBodyBytes: e.GATEWAY_MAX_BODY_BYTES,
    maxUploadBytes: e.GATEWAY_MAX_UPLOAD_BYTES,
    bodyTimeoutMs: e.GATEWAY_BODY_TIMEOUT_MS,
    maxTopupMicros: e.GATEWAY_MAX_TOPUP_USD * 1_000_000,
    drainTimeoutMs: e.GATEWAY_DRAIN_TIMEOUT_MS,
    upstreamTimeoutMs: e.GATEWAY_UPSTREAM_TIMEOUT_MS,
    firstByteTimeoutMs: e.GATEWAY_FIRST_BYTE_TIMEOUT_MS,
    wholeAnswerTimeoutMs: e.GATEWAY_WHOLE_ANSWER_TIMEOUT_MS,
    streamIdleTimeoutMs: e.GATEWAY_STREAM_IDLE_TIMEOUT_MS,
    maxUpstreamBodyBytes: e.GATEWAY_MAX_UPSTREAM_BODY_BYTES,
    breakerFailures: e.GATEWAY_BREAKER_FAILURES,
    breakerCooldownMs: e.GATEWAY_BREAKER_COOLDOWN_MS,
    cachePollMs: e.GATEWAY_CACHE_POLL_MS,
    logRequests: e.GATEWAY_LOG_REQUESTS === "1",
    keptResponsesMaxChars: e.GATEWAY_KEPT_RESPONSES_MAX_CHARS,
    corsOrigins: corsOriginsOf(e.GATEWAY_CORS_ORIGINS),
  };
}

/** GATEWAY_CORS_ORIGINS as the CORS middleware takes it. */
function corsOriginsOf(value: string): CorsOrigins {
  if (value === "*" || value === "none") return value;
  // As a browser sends it: scheme and host in lower case, no default port.
  return value.split(",").map((origin) => new URL(origin.trim()).origin);
}
