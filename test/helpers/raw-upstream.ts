import { createServer, type Socket } from "node:net";

/**
 * A loopback upstream that writes every byte of its answer itself (node:net on 127.0.0.1,
 * port 0), for what Bun.serve cannot send: response headers with no body byte after them, a
 * Content-Length the body never reaches, a body that stops and stays open. Each connection
 * carries one request; `answer` gets it once its body has arrived and writes the response.
 */

export interface RawExchange {
  path: string;
  /** The request body as text. */
  body: string;
  write(data: string | Uint8Array): void;
  /** Ends the connection cleanly (FIN). */
  end(): void;
  /** Whether the other side (the gateway) has closed this connection. */
  readonly closed: boolean;
  /** Resolves when the connection is closed, by either side. */
  whenClosed: Promise<void>;
}

export interface RawUpstream {
  /** http://127.0.0.1:{port}; append the API's base path (e.g. /v1) for a channel's base_url. */
  url: string;
  /** Every request received, oldest first. */
  exchanges: RawExchange[];
  close(): Promise<void>;
}

/** A response head: status line and headers (as pairs, for a name sent twice), ending with the blank line. */
export function responseHead(status: number, headers: Record<string, string> | [string, string][]): string {
  const lines = (Array.isArray(headers) ? headers : Object.entries(headers)).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${status === 200 ? "OK" : "Status"}\r\n${lines.join("")}\r\n`;
}

/** Collects one request from `socket`: its path and body (by Content-Length). */
function readRequest(socket: Socket): Promise<{ path: string; body: string }> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const onData = (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const headEnd = received.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < headEnd + 4 + length) return;
      socket.off("data", onData);
      const path = head.split(" ")[1] ?? "/";
      resolve({ path, body: received.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8") });
    };
    socket.on("data", onData);
  });
}

/** Starts the upstream; `answer` scripts each response. */
export async function startRawUpstream(answer: (exchange: RawExchange) => void | Promise<void>): Promise<RawUpstream> {
  const exchanges: RawExchange[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    let closed = false;
    const whenClosed = new Promise<void>((resolve) =>
      socket.on("close", () => {
        closed = true;
        sockets.delete(socket);
        resolve();
      }),
    );
    const request = await readRequest(socket);
    const exchange: RawExchange = {
      ...request,
      write: (data) => void socket.write(data),
      end: () => void socket.end(),
      get closed() {
        return closed;
      },
      whenClosed,
    };
    exchanges.push(exchange);
    await answer(exchange);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The caller's error when an upstream's body sent nothing for `idleMs` (the stream idle timeout). */
export function stalledError(idleMs: number) {
  return { message: `Upstream timed out: the upstream's answer stalled: nothing came for ${idleMs} ms`, type: "upstream_timeout", code: 504 };
}
