import { requestHead } from "../../lib/http1/request-head.ts";
import { ConnectionPool } from "./connection-pool.ts";
import { StaleConnection } from "./upstream-connection.ts";

/** Variables that make Bun's fetch go through a proxy; the socket client connects directly, so with any set, fetch serves every call. */
const PROXY_VARIABLES = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/**
 * Upstream calls in flight (on the main thread's connections, or through fetch until its
 * answer's head) at which more go through fetch. One call's hand-over to fetch's thread and
 * back costs more than making it here, but under load the main thread is the gateway's
 * bottleneck (100% of a core at concurrency 64) and fetch's thread a second core: there,
 * moving the upstream's reads and writes onto the main thread served 30% fewer requests a
 * second, and letting 4 calls at a time stay on it still cost 6-7%. Only a call made while
 * the gateway is nearly idle, the light load whose latency this cuts, is made here.
 */
const MOST_IN_FLIGHT_HERE = 2;

/** A fetch with the pool it keeps connections in. */
export interface SocketFetch {
  fetch: typeof fetch;
  /** Closes the idle connections. */
  closeIdle(): void;
}

/**
 * A fetch for upstream calls that sends plain-HTTP requests with a text body (every chat and
 * JSON call to a local model server, a sidecar, the bench's upstream) over keep-alive
 * connections of its own on the main thread (UpstreamConnection says why) while few calls are
 * in flight, and hands every other call to `fallback`: calls past MOST_IN_FLIGHT_HERE; HTTPS,
 * whose certificate checks and TLS settings stay fetch's; a streamed upload; a URL with
 * credentials; and every call where a proxy is configured.
 */
export function createSocketFetch(fallback: typeof fetch, env: Record<string, string | undefined>): SocketFetch {
  if (PROXY_VARIABLES.some((name) => env[name])) return { fetch: fallback, closeIdle: () => {} };
  const pool = new ConnectionPool();
  const userAgent = `Bun/${Bun.version}`;

  /** Calls made through fetch whose answer's head has not come. */
  let fetchesAwaitingHead = 0;
  async function throughFallback(input: string | URL | Request, init: RequestInit | undefined): Promise<Response> {
    fetchesAwaitingHead += 1;
    try {
      return await fallback(input, init);
    } finally {
      fetchesAwaitingHead -= 1;
    }
  }

  async function socketFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const body = init?.body;
    if (pool.inFlight + fetchesAwaitingHead >= MOST_IN_FLIGHT_HERE) return throughFallback(input, init);
    if (typeof input !== "string" || !input.startsWith("http://") || (body !== undefined && body !== null && typeof body !== "string")) return throughFallback(input, init);
    const url = new URL(input);
    if (url.username !== "" || url.password !== "") return throughFallback(input, init);
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    const method = normalizedMethod(init?.method ?? "GET");
    if ((method === "GET" || method === "HEAD") && typeof body === "string") throw new TypeError(`a ${method} request cannot have a body`);
    const bodyLength = typeof body === "string" ? Buffer.byteLength(body) : null;
    const head = requestHead({ method, target: url.pathname + url.search, host: url.host, headers: headerPairs(init?.headers), bodyLength, userAgent });
    const request = typeof body === "string" ? head + body : head;
    // The head is ASCII (requestHead refuses anything else), so its length is its size.
    const byteLength = head.length + (bodyLength ?? 0);
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const port = Number(url.port || 80);
    for (let retried = false; ; retried = true) {
      const idle = retried ? null : pool.takeIdle(hostname, port);
      const connection = idle ?? (await untilAborted(pool.open(hostname, port), signal, (opened) => opened.close()));
      try {
        return await connection.send(request, byteLength, signal, method === "HEAD");
      } catch (error) {
        // Once, as fetch does: a server may close an idle connection as the request is sent on it.
        if (error instanceof StaleConnection && idle !== null) continue;
        throw error;
      }
    }
  }

  return { fetch: socketFetch as typeof fetch, closeIdle: () => pool.closeIdle() };
}

/** Methods fetch writes in upper case whatever case they were given in; any other is sent as given. */
const NORMALIZED_METHODS = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);

function normalizedMethod(method: string): string {
  const upper = method.toUpperCase();
  return NORMALIZED_METHODS.has(upper) ? upper : method;
}

/** A request's header fields as name-value pairs, from any of fetch's forms. */
function headerPairs(headers: HeadersInit | undefined): Iterable<[string, string]> {
  if (headers === undefined) return [];
  if (headers instanceof Headers) return headers.entries();
  if (Array.isArray(headers)) return headers as [string, string][];
  return Object.entries(headers);
}

/**
 * `pending`, or the signal's reason as soon as it aborts: a connect to a host that drops its
 * packets can take minutes to fail, and the request's deadline must not wait for it. What
 * `pending` yields after an abort is given to `discard`.
 */
function untilAborted<T>(pending: Promise<T>, signal: AbortSignal | undefined, discard: (value: T) => void): Promise<T> {
  if (!signal) return pending;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) discard(value);
        else resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
