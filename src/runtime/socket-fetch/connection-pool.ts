import { UpstreamConnection, type ConnectionOwner } from "./upstream-connection.ts";

/**
 * How long an idle connection is kept. Servers close idle keep-alive connections after a few
 * seconds (Node's and uvicorn's 5 s); letting go first keeps a request from being sent on a
 * connection the server is closing at that moment.
 */
const IDLE_MS = 4_000;
/** Most idle connections kept per origin; past it the one idle longest is closed. */
const MOST_IDLE_PER_ORIGIN = 256;

/** Idle keep-alive connections per origin ("host:port"), the most recently used taken first, and the count of requests on them. */
export class ConnectionPool {
  readonly #idle = new Map<string, UpstreamConnection[]>();
  #sweeper: ReturnType<typeof setInterval> | null = null;
  /** Requests sent on this pool's connections whose answers have not ended. */
  inFlight = 0;


  /** An open idle connection to the origin, taken out of the pool, or null when it has none. */
  takeIdle(hostname: string, port: number): UpstreamConnection | null {
    const idle = this.#idle.get(originOf(hostname, port));
    while (idle && idle.length > 0) {
      const connection = idle.pop()!;
      if (!connection.closed) return connection;
    }
    return null;
  }

  /** A new connection to the origin, which comes back to this pool whenever an answer leaves it idle and reusable. */
  open(hostname: string, port: number): Promise<UpstreamConnection> {
    const origin = originOf(hostname, port);
    const owner: ConnectionOwner = {
      idle: (connection) => this.#putBack(origin, connection),
      exchangeStarted: () => {
        this.inFlight += 1;
      },
      exchangeEnded: () => {
        this.inFlight -= 1;
      },
    };
    return UpstreamConnection.open(hostname, port, owner);
  }

  /** Closes every idle connection (at shutdown, and in tests). */
  closeIdle(): void {
    for (const idle of this.#idle.values()) for (const connection of idle) connection.close();
    this.#idle.clear();
  }

  #putBack(origin: string, connection: UpstreamConnection): void {
    let idle = this.#idle.get(origin);
    if (!idle) this.#idle.set(origin, (idle = []));
    idle.push(connection);
    if (idle.length > MOST_IDLE_PER_ORIGIN) idle.shift()!.close();
    if (this.#sweeper) return;
    this.#sweeper = setInterval(() => this.#sweep(), IDLE_MS / 4);
    // A sweep of idle connections does not keep the process alive by itself.
    this.#sweeper.unref();
  }

  /** Closes connections idle longer than IDLE_MS, and stops sweeping once none is left. */
  #sweep(): void {
    const oldest = performance.now() - IDLE_MS;
    for (const [origin, idle] of this.#idle) {
      const kept: UpstreamConnection[] = [];
      for (const connection of idle) {
        if (!connection.closed && connection.idleSince > oldest) kept.push(connection);
        else connection.close();
      }
      if (kept.length > 0) this.#idle.set(origin, kept);
      else this.#idle.delete(origin);
    }
    if (this.#idle.size === 0 && this.#sweeper) {
      clearInterval(this.#sweeper);
      this.#sweeper = null;
    }
  }
}

function originOf(hostname: string, port: number): string {
  return `${hostname}:${port}`;
}
