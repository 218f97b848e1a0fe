import type { Socket, SocketHandler } from "bun";
import { ResponseParser } from "../../lib/http1/parse-response.ts";
import { MalformedResponse } from "../../lib/http1/malformed-response.ts";
import { ResponseReceiver } from "./response-receiver.ts";

/** A reused connection closed before any byte of its answer: the server had let it go idle-closed, and the request can go again on a new one. */
export class StaleConnection extends Error {}

/** One request on a connection: its parser, the receiver turning it into a Response, and the abort that may end it. */
interface Exchange {
  parser: ResponseParser;
  receiver: ResponseReceiver;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** Socket events, shared by every connection (each finds itself as the socket's data). */
const HANDLERS: SocketHandler<UpstreamConnection> = {
  data: (socket, bytes) => socket.data.received(bytes),
  drain: (socket) => socket.data.drained(),
  end: (socket) => socket.data.closedByServer(null),
  close: (socket, error) => socket.data.closedByServer(error ?? null),
  error: (socket, error) => socket.data.closedByServer(error),
};

/** What a connection tells its pool. */
export interface ConnectionOwner {
  /** An answer ended and left the connection reusable: it is idle again. */
  idle(connection: UpstreamConnection): void;
  /** A request is sent on it. */
  exchangeStarted(): void;
  /** A request it carried ended, its answer read to the end or failed. */
  exchangeEnded(): void;
}

/**
 * A keep-alive HTTP/1.1 connection to one upstream origin, on the runtime's own event loop:
 * unlike fetch, whose client runs on a thread of its own that each request must wake and hear
 * back from, a request and its answer here cost no hand-over between threads. It carries one
 * request at a time; after an answer that leaves it reusable its owner takes it back as idle,
 * and after any other it closes itself.
 */
export class UpstreamConnection {
  #socket: Socket<UpstreamConnection> | null = null;
  #exchange: Exchange | null = null;
  /** Request bytes the socket had no room for yet, written as it drains. */
  #unwritten: Uint8Array | null = null;
  #closed = false;
  /** Requests this connection has carried to their end. */
  #carried = 0;
  /** When it last became idle (performance.now()). */
  idleSince = 0;

  constructor(private readonly owner: ConnectionOwner) {}

  /** Opens a connection; rejects with the runtime's error (code ECONNREFUSED, ENOTFOUND...). */
  static async open(hostname: string, port: number, owner: ConnectionOwner): Promise<UpstreamConnection> {
    const connection = new UpstreamConnection(owner);
    connection.#socket = await Bun.connect({ hostname, port, data: connection, socket: HANDLERS });
    connection.#socket.setNoDelay(true);
    return connection;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Sends one request (its head and body as text, `byteLength` bytes) and resolves with the
   * Response once the answer's head is in. The signal's abort rejects it, or errors its body,
   * and closes the connection. A reused connection the server closed without answering
   * rejects with StaleConnection.
   */
  send(request: string, byteLength: number, signal: AbortSignal | undefined, headRequest: boolean): Promise<Response> {
    const receiver = new ResponseReceiver({ pause: () => this.#socket?.pause(), resume: () => this.#socket?.resume(), abandon: () => this.close() });
    const exchange: Exchange = { parser: new ResponseParser(receiver, headRequest), receiver, signal, onAbort: undefined };
    this.#exchange = exchange;
    this.owner.exchangeStarted();
    if (signal) {
      exchange.onAbort = () => this.#fail(signal.reason);
      signal.addEventListener("abort", exchange.onAbort, { once: true });
    }
    const written = this.#socket!.write(request);
    // The socket took only part (a body larger than its buffer): the rest goes as it drains.
    if (written < byteLength) this.#unwritten = new TextEncoder().encode(request).subarray(Math.max(written, 0));
    return receiver.response;
  }

  /** Closes the connection; an exchange on it that has not ended fails. */
  close(): void {
    this.#fail(new MalformedResponse("the connection to the upstream was closed"));
    this.#shut();
  }

  received(bytes: Uint8Array): void {
    const exchange = this.#exchange;
    // Bytes nobody asked for: the server is out of step with this connection.
    if (!exchange) return this.close();
    try {
      exchange.parser.push(bytes);
    } catch (error) {
      return this.#fail(error);
    }
    exchange.receiver.afterPush();
    if (!exchange.parser.done) return;
    this.#endExchange(exchange);
    if (!exchange.parser.reusable || this.#closed) return this.#shut();
    this.idleSince = performance.now();
    this.owner.idle(this);
  }

  drained(): void {
    const unwritten = this.#unwritten;
    if (!unwritten || !this.#socket) return;
    const written = this.#socket.write(unwritten);
    this.#unwritten = written < unwritten.length ? unwritten.subarray(Math.max(written, 0)) : null;
  }

  /** The server ended or dropped the connection: the end of a body that runs to the close, else a failure. */
  closedByServer(error: Error | null): void {
    this.#closed = true;
    const exchange = this.#exchange;
    if (!exchange) return;
    try {
      if (error) throw error;
      exchange.parser.finish();
      exchange.receiver.afterPush();
      this.#endExchange(exchange);
    } catch (failure) {
      const stale = this.#carried > 0 && !exchange.parser.started;
      this.#fail(stale ? new StaleConnection("the upstream had closed the reused connection") : failure);
    }
  }

  /** The exchange is over, its answer read or failed: the abort no longer concerns it. */
  #endExchange(exchange: Exchange): void {
    if (this.#exchange !== exchange) return;
    this.#exchange = null;
    this.#carried += 1;
    if (exchange.onAbort) exchange.signal!.removeEventListener("abort", exchange.onAbort);
    this.owner.exchangeEnded();
  }

  /** Fails the exchange in progress, if any, and closes the connection: what is left of its answer cannot be told from the next. */
  #fail(error: unknown): void {
    const exchange = this.#exchange;
    if (exchange) {
      this.#endExchange(exchange);
      exchange.receiver.fail(error);
    }
    this.#shut();
  }

  #shut(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket?.terminate();
  }
}
