import type { Socket, TCPSocketListener } from "bun";
import { sleep } from "./common.ts";

/**
 * A loopback upstream (Bun.listen on 127.0.0.1, port 0) that writes every byte of its answers
 * itself and, unlike raw-upstream.ts, keeps each connection open for the next request, so a
 * client's connection reuse can be counted. It records every byte each connection received,
 * and how many of the bytes written the kernel took (`sent`): a client that stops reading
 * stalls it.
 */

/** One connection the upstream accepted. */
export interface AcceptedConnection {
  /** Every byte received on it, as latin1 text. */
  received: string;
  /** The requests on it so far, each its head and body (by content-length) as latin1 text. */
  requests: string[];
  /** Bytes of what was written that the kernel took. */
  readonly sent: number;
  /** Writes the bytes (text as UTF-8), holding what the socket has no room for until it drains. */
  write(data: string | Uint8Array): void;
  /** Ends the connection (FIN) once everything written has gone. */
  end(): void;
  readonly closed: boolean;
  /** Resolves when the connection is closed, by either side. */
  whenClosed: Promise<void>;
}

export interface KeepAliveUpstream {
  /** http://127.0.0.1:{port} */
  url: string;
  /** Every connection accepted, oldest first. */
  connections: AcceptedConnection[];
  close(): void;
}

/** How `answer` is told of a request: its text and the connection it came on (its index there is requests.length - 1). */
export type Answer = (request: string, connection: AcceptedConnection) => void;

/** Where the first complete request in `pending` ends, or -1. */
function requestEnd(pending: string): number {
  const headEnd = pending.indexOf("\r\n\r\n");
  if (headEnd < 0) return -1;
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(pending.slice(0, headEnd))?.[1] ?? 0);
  const end = headEnd + 4 + length;
  return pending.length >= end ? end : -1;
}

/** The state Bun keeps with each accepted socket. */
class Accepted implements AcceptedConnection {
  received = "";
  requests: string[] = [];
  sent = 0;
  closed = false;
  whenClosed: Promise<void>;
  markClosed!: () => void;
  #pending = "";
  #queue: Uint8Array[] = [];
  #ending = false;

  constructor(
    private readonly socket: Socket<Accepted>,
    private readonly answer: Answer,
  ) {
    this.whenClosed = new Promise((resolve) => (this.markClosed = resolve));
  }

  write(data: string | Uint8Array): void {
    this.#queue.push(typeof data === "string" ? new TextEncoder().encode(data) : data);
    this.flush();
  }

  end(): void {
    this.#ending = true;
    this.flush();
  }

  flush(): void {
    while (this.#queue.length > 0 && !this.closed) {
      const next = this.#queue[0]!;
      const written = Math.max(this.socket.write(next), 0);
      this.sent += written;
      if (written < next.length) {
        this.#queue[0] = next.subarray(written);
        return;
      }
      this.#queue.shift();
    }
    if (this.#ending && !this.closed) this.socket.end();
  }

  take(bytes: Uint8Array): void {
    const text = Buffer.from(bytes).toString("latin1");
    this.received += text;
    this.#pending += text;
    for (let end = requestEnd(this.#pending); end >= 0; end = requestEnd(this.#pending)) {
      this.requests.push(this.#pending.slice(0, end));
      this.#pending = this.#pending.slice(end);
      this.answer(this.requests.at(-1)!, this);
    }
  }
}

/** Starts the upstream; `answer` scripts the answer to each request. */
export function startKeepAliveUpstream(answer: Answer): KeepAliveUpstream {
  const connections: Accepted[] = [];
  const closed = (socket: Socket<Accepted>) => {
    socket.data.closed = true;
    socket.data.markClosed();
  };
  const listener: TCPSocketListener<Accepted> = Bun.listen<Accepted>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = new Accepted(socket, answer);
        connections.push(socket.data);
      },
      data: (socket, bytes) => socket.data.take(bytes),
      drain: (socket) => socket.data.flush(),
      close: closed,
      error: closed,
    },
  });
  return { url: `http://127.0.0.1:${listener.port}`, connections, close: () => listener.stop(true) };
}

/** Waits until `condition` holds, checking every 5 ms; throws naming `what` after `limitMs`. */
export async function until(condition: () => boolean, what: string, limitMs = 3_000): Promise<void> {
  for (const start = performance.now(); !condition(); await sleep(5)) {
    if (performance.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
  }
}
