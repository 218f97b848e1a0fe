import type { Channel } from "../channels/channel.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { UpstreamError } from "../upstreams/upstream-error.ts";
import type { ChannelBreaker, ChannelPause } from "./channel-breaker.ts";

/** The outcome of a call that some channel served. */
export interface Served<T> {
  value: T;
  channel: Channel;
  attempts: number;
  /** Parameters the serving upstream could not honour (the x-gateway-warnings header). */
  warnings?: string;
}

interface FailoverOptions {
  /** Abort signal of the whole request (client gone or overall deadline). */
  signal: AbortSignal;
  /** Aborted only when the client went away: not the channel's fault. */
  clientSignal: AbortSignal;
  breaker: ChannelBreaker;
  /** Base of the jittered exponential backoff between attempts, in ms. */
  backoffMs?: number;
}

/**
 * How far the pause between two attempts grows before its jitter. Doubling from 25 ms, the
 * eighth retry of a model with many channels would otherwise wait 3 s, the tenth 13 s: the
 * deadline would pass in a pause rather than on a channel that might answer.
 */
export const MAX_BACKOFF_MS = 1_000;

/**
 * The pause before attempt `attempts + 1`, after `attempts` failed ones: `baseMs` doubled for
 * each failure after the first, up to MAX_BACKOFF_MS, then jittered to between half and one
 * and a half times that, so callers that failed together do not retry together.
 */
export function backoffDelayMs(attempts: number, baseMs: number, random: () => number = Math.random): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** (attempts - 1)) * (0.5 + random());
}

/** Resolves after `ms`, or early when `signal` aborts. */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // The listener goes with the pause: a request's signal outlives all of its pauses.
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Tries `attempt` on each channel in order until one succeeds, skipping channels the breaker
 * has cooled. A retryable failure moves on after a jittered exponential backoff; any other
 * failure is final. `attempt` must only resolve once nothing has been sent to the client, so
 * a retry can never duplicate output. An attempt that calls its channel more than once says
 * so with `calledAgain`, so that the attempts reported count every upstream call.
 */
export async function withFailover<T>(
  channels: readonly Channel[],
  attempt: (channel: Channel, calledAgain: () => void) => Promise<T>,
  options: FailoverOptions,
): Promise<Served<T>> {
  const { breaker, signal } = options;
  const backoffMs = options.backoffMs ?? 25;
  let last: UpstreamError | undefined;
  let attempts = 0;
  const calledAgain = () => {
    attempts++;
  };
  for (const channel of channels) {
    const ticket = breaker.admit(channel.id);
    if (ticket === null) continue;
    if (attempts > 0) await sleepUnlessAborted(backoffDelayMs(attempts, backoffMs), signal);
    if (signal.aborted) {
      breaker.released(channel.id, ticket);
      break;
    }
    attempts++;
    try {
      const value = await attempt(channel, calledAgain);
      breaker.succeeded(channel.id);
      return { value, channel, attempts };
    } catch (error) {
      if (options.clientSignal.aborted) {
        breaker.released(channel.id, ticket);
        throw clientClosed();
      }
      if (!(error instanceof UpstreamError)) {
        breaker.released(channel.id, ticket);
        throw error;
      }
      last = error;
      if (!error.retryable) {
        breaker.released(channel.id, ticket);
        throw afterAttempts(error.toGatewayError(), attempts);
      }
      if (!error.faultOfChannel) breaker.released(channel.id, ticket);
      else if (error.upstreamStatus === 429) breaker.throttled(channel.id, ticket, error.retryAfterSeconds);
      else breaker.failed(channel.id, ticket, error.upstreamStatus === undefined ? error.message : `${error.upstreamStatus}: ${error.message}`);
    }
  }
  // A client that left (in a backoff, or before the first attempt while its hold waited) is
  // a 499 like one that leaves during an attempt, not the last attempt's error or a deadline.
  if (options.clientSignal.aborted) throw clientClosed();
  if (last) throw afterAttempts(last.toGatewayError(), attempts);
  if (signal.aborted) throw afterAttempts(new GatewayError(504, "The request's deadline passed before an upstream answered"), attempts);
  throw everyChannelPaused(channels, breaker);
}

const clientClosed = () => new GatewayError(499, "The client closed the request");

/** The caller's error after `attempts` upstream calls, saying how many, as a served response does (x-gateway-attempts). */
function afterAttempts(error: GatewayError, attempts: number): GatewayError {
  if (attempts === 0) return error;
  return new GatewayError(error.status, error.message, { ...error.headers, "x-gateway-attempts": String(attempts) }, error.param);
}

/**
 * The caller's error when the breaker skipped every channel: 429 when the one that frees up
 * first was rate limited by its upstream, else 503; either with Retry-After for that moment.
 */
function everyChannelPaused(channels: readonly Channel[], breaker: ChannelBreaker): GatewayError {
  let first: ChannelPause | null = null;
  for (const channel of channels) {
    const pause = breaker.pauseOf(channel.id);
    if (pause && (!first || pause.remainingMs < first.remainingMs)) first = pause;
  }
  const headers = first ? { "retry-after": String(Math.max(1, Math.ceil(first.remainingMs / 1000))) } : undefined;
  if (first?.reason === "throttled") return new GatewayError(429, "The upstream is rate limiting this model; retry later", headers);
  return new GatewayError(503, "Every channel for this model is cooling down after failures; retry shortly", headers);
}
