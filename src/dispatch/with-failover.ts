import type { Channel } from "../channels/channel.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { UpstreamError } from "../upstreams/upstream-error.ts";

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
  /** Base of the jittered exponential backoff between attempts, in ms. */
  backoffMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Resolves after `ms`, or early when `signal` aborts. */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/**
 * Tries `attempt` on each channel in order until one succeeds. A retryable failure (connect
 * error, timeout, 429, 5xx) moves on after a jittered backoff; any other failure is final.
 * `attempt` must only resolve once nothing has been sent to the client, so a retry can never
 * duplicate output.
 */
export async function withFailover<T>(
  channels: readonly Channel[],
  attempt: (channel: Channel) => Promise<T>,
  options: FailoverOptions,
): Promise<Served<T>> {
  const sleep = options.sleep ?? sleepUnlessAborted;
  const backoffMs = options.backoffMs ?? 25;
  let last: UpstreamError | undefined;
  let attempts = 0;
  for (const channel of channels) {
    if (options.signal.aborted) break;
    if (attempts > 0) await sleep(backoffMs * 2 ** (attempts - 1) * (0.5 + Math.random()), options.signal);
    attempts++;
    try {
      return { value: await attempt(channel), channel, attempts };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      last = error;
      if (!error.retryable) throw error.toGatewayError();
    }
  }
  if (last) throw last.toGatewayError();
  throw new GatewayError(503, "No channel could serve this request");
}
