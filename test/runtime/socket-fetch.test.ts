import { afterEach, describe, expect, test } from "bun:test";
import { createSocketFetch, type SocketFetch } from "../../src/runtime/socket-fetch/socket-fetch.ts";
import { startKeepAliveUpstream, until, type AcceptedConnection, type Answer, type KeepAliveUpstream } from "../helpers/keep-alive-upstream.ts";
import { responseHead } from "../helpers/raw-upstream.ts";
import { sleep } from "../helpers/common.ts";

/** What every test started, closed after it. */
let upstream: KeepAliveUpstream | null = null;
let client: SocketFetch | null = null;

afterEach(() => {
  client?.closeIdle();
  upstream?.close();
  client = upstream = null;
});

/** Calls to the fallback fetch, each answered "from fallback". */
interface Fallback {
  fetch: typeof fetch;
  calls: unknown[][];
}

function recordingFallback(): Fallback {
  const calls: unknown[][] = [];
  const fetch = (async (...args: unknown[]) => {
    calls.push(args);
    return new Response("from fallback");
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

/** An upstream scripted by `answer`, and a socket fetch whose fallback records its calls. */
function setUp(answer: Answer, env: Record<string, string | undefined> = {}): { upstream: KeepAliveUpstream; client: SocketFetch; fallback: Fallback } {
  const fallback = recordingFallback();
  upstream = startKeepAliveUpstream(answer);
  client = createSocketFetch(fallback.fetch, env);
  return { upstream, client, fallback };
}

/** A 200 answer with a Content-Length body. */
function answerWith(body: string): string {
  return responseHead(200, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(body)) }) + body;
}

/** Answers every request "ok" and leaves its connection open. */
const answerOk: Answer = (_, connection) => connection.write(answerWith("ok"));

/** What socket-fetch writes for a GET of `target` with no headers of the caller's. */
function plainGet(target: string, port: string): string {
  return `GET ${target} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: keep-alive\r\naccept-encoding: identity\r\naccept: */*\r\nuser-agent: Bun/${Bun.version}\r\n\r\n`;
}

function portOf(url: string): string {
  return new URL(url).port;
}

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("socket fetch: keep-alive", () => {
  test("three sequential requests go over one connection, each written as the exact bytes expected", async () => {
    const { upstream, client, fallback } = setUp(answerOk);
    for (const path of ["/a", "/b?x=1", "/c"]) expect(await (await client.fetch(`${upstream.url}${path}`)).text()).toBe("ok");
    expect(upstream.connections).toHaveLength(1);
    const port = portOf(upstream.url);
    expect(upstream.connections[0]!.received).toBe(plainGet("/a", port) + plainGet("/b?x=1", port) + plainGet("/c", port));
    expect(fallback.calls).toHaveLength(0);
  });

  test("a POST's head carries the caller's fields and the body's byte length, then the UTF-8 body", async () => {
    const { upstream, client } = setUp(answerOk);
    const body = JSON.stringify({ text: "héllo ✓" });
    const response = await client.fetch(`${upstream.url}/v1/chat`, { method: "post", body, headers: { Authorization: "Bearer k", "Content-Type": "application/json", Host: "elsewhere" } });
    expect(await response.text()).toBe("ok");
    expect(upstream.connections[0]!.requests).toEqual([
      `POST /v1/chat HTTP/1.1\r\nhost: 127.0.0.1:${portOf(upstream.url)}\r\nconnection: keep-alive\r\naccept-encoding: identity\r\n` +
        `Authorization: Bearer k\r\nContent-Type: application/json\r\naccept: */*\r\nuser-agent: Bun/${Bun.version}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n` +
        Buffer.from(body).toString("latin1"),
    ]);
  });

  test("a method is written in upper case only where fetch writes it so: post becomes POST, patch stays patch", async () => {
    const { upstream, client } = setUp(answerOk);
    await (await client.fetch(`${upstream.url}/p`, { method: "patch", body: "{}" })).text();
    await (await client.fetch(`${upstream.url}/q`, { method: "post", body: "{}" })).text();
    expect(upstream.connections[0]!.requests.map((request) => request.slice(0, request.indexOf(" ")))).toEqual(["patch", "POST"]);
  });

  test("a GET with a body is a TypeError, as fetch makes it, and nothing is sent", async () => {
    const { upstream, client } = setUp(answerOk);
    expect(await rejection(client.fetch(`${upstream.url}/g`, { method: "get", body: "{}" }))).toBeInstanceOf(TypeError);
    expect(upstream.connections).toHaveLength(0);
  });

  test("a 205 that sends a body anyway: the Response has none, its bytes are read past, and the connection carries the next request", async () => {
    let answered = 0;
    const { upstream, client } = setUp((_, connection) => connection.write(answered++ === 0 ? responseHead(205, { "content-length": "5" }) + "hello" : answerWith("next")));
    const reset = await client.fetch(`${upstream.url}/1`);
    expect(reset.status).toBe(205);
    expect(reset.body).toBeNull();
    expect(await (await client.fetch(`${upstream.url}/2`)).text()).toBe("next");
    expect(upstream.connections).toHaveLength(1);
  });

  test("an answer with Connection: close makes the next request open a new connection", async () => {
    const { upstream, client } = setUp((_, connection) => {
      connection.write(responseHead(200, { connection: "close", "content-length": "2" }) + "ok");
      connection.end();
    });
    expect(await (await client.fetch(`${upstream.url}/1`)).text()).toBe("ok");
    expect(await (await client.fetch(`${upstream.url}/2`)).text()).toBe("ok");
    expect(upstream.connections.map((connection) => connection.requests.length)).toEqual([1, 1]);
  });

  test("closeIdle() closes the pooled connection: the server sees it close", async () => {
    const { upstream, client } = setUp(answerOk);
    await (await client.fetch(upstream.url)).text();
    await sleep(20);
    expect(upstream.connections[0]!.closed).toBe(false);
    client.closeIdle();
    await upstream.connections[0]!.whenClosed;
  });
});

describe("socket fetch: a connection the server let go", () => {
  test("a pooled connection the server closed while idle: the next request goes on a new one", async () => {
    const { upstream, client } = setUp((_, connection) => {
      connection.write(answerWith("ok"));
      connection.end();
    });
    expect(await (await client.fetch(`${upstream.url}/1`)).text()).toBe("ok");
    await upstream.connections[0]!.whenClosed;
    expect(await (await client.fetch(`${upstream.url}/2`)).text()).toBe("ok");
    expect(upstream.connections.map((connection) => connection.requests.length)).toEqual([1, 1]);
  });

  test("a reused connection closed before any byte of its answer: the request is sent again on a new connection", async () => {
    const { upstream, client } = setUp((_, connection) => {
      if (connection.requests.length === 2) return connection.end();
      connection.write(answerWith(`answer ${upstream.connections.indexOf(connection)}`));
    });
    expect(await (await client.fetch(`${upstream.url}/1`)).text()).toBe("answer 0");
    expect(await (await client.fetch(`${upstream.url}/2`)).text()).toBe("answer 1");
    expect(upstream.connections.map((connection) => connection.requests)).toEqual([[plainGet("/1", portOf(upstream.url)), plainGet("/2", portOf(upstream.url))], [plainGet("/2", portOf(upstream.url))]]);
  });

  test("a reused connection closed after an interim 103 is not sent again: the server had begun its answer", async () => {
    const { upstream, client } = setUp((_, connection) => {
      if (connection.requests.length === 1) return connection.write(answerWith("ok"));
      connection.write("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n");
      connection.end();
    });
    await (await client.fetch(`${upstream.url}/1`)).text();
    expect((await rejection(client.fetch(`${upstream.url}/2`, { method: "POST", body: "{}" }))).code).toBe("MALFORMED_HTTP_RESPONSE");
    expect(upstream.connections.map((connection) => connection.requests.length)).toEqual([2]);
  });

  test("the request is sent again only once: a new connection that closes without answering rejects", async () => {
    const { upstream, client } = setUp((_, connection) => {
      if (upstream.connections.length === 1 && connection.requests.length === 1) return connection.write(answerWith("ok"));
      connection.end();
    });
    await (await client.fetch(`${upstream.url}/1`)).text();
    const error = await rejection(client.fetch(`${upstream.url}/2`));
    expect(error.code).toBe("MALFORMED_HTTP_RESPONSE");
    expect(upstream.connections.map((connection) => connection.requests.length)).toEqual([2, 1]);
  });
});

describe("socket fetch: bodies however the server writes them", () => {
  const body = "The quick brown fox jumps over the lazy dog. ".repeat(20);

  /** Writes `bytes` in pieces of `size`, a macrotask apart so each goes as a packet of its own. */
  async function writeInPieces(connection: AcceptedConnection, bytes: string, size: number): Promise<void> {
    for (let at = 0; at < bytes.length; at += size) {
      connection.write(bytes.slice(at, at + size));
      await sleep(1);
    }
  }

  const answers: [string, Answer][] = [
    ["head and body in one write", (_, connection) => connection.write(answerWith(body))],
    ["head and body in 7-byte writes", (_, connection) => void writeInPieces(connection, answerWith(body), 7)],
    [
      "a chunked body in several writes",
      (_, connection) => {
        connection.write(responseHead(200, { "transfer-encoding": "chunked" }));
        void writeInPieces(connection, `${(400).toString(16)}\r\n${body.slice(0, 400)}\r\n${(body.length - 400).toString(16)};ext=1\r\n${body.slice(400)}\r\n0\r\n\r\n`, 50);
      },
    ],
    [
      "a body that runs until the server closes",
      (_, connection) => {
        connection.write(responseHead(200, { "content-type": "text/plain" }));
        void writeInPieces(connection, body, 300).then(() => connection.end());
      },
    ],
  ];

  test.each(answers)("%s: the body arrives whole", async (_, answer) => {
    const { upstream, client } = setUp(answer);
    const response = await client.fetch(upstream.url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(body);
  });

  test("a gzip-encoded answer, despite accept-encoding: identity, is decoded", async () => {
    const { upstream, client } = setUp((_, connection) => {
      const gzipped = Bun.gzipSync(body);
      connection.write(responseHead(200, { "content-encoding": "gzip", "content-length": String(gzipped.length) }));
      connection.write(gzipped);
    });
    expect(await (await client.fetch(upstream.url)).text()).toBe(body);
    expect(upstream.connections[0]!.received).toContain("\r\naccept-encoding: identity\r\n");
  });
});

describe("socket fetch: a streamed body", () => {
  test("a reader that stops reading stalls the server's writes, and reading on yields every byte intact", async () => {
    const total = 32 * 1024 * 1024;
    // Bytes that differ from one 64 KiB block to the next, so a block lost or repeated shows.
    const bytes = new Uint8Array(total);
    for (let i = 0; i < total; i += 4) new DataView(bytes.buffer).setUint32(i, i);
    const { upstream, client } = setUp((_, connection) => {
      connection.write(responseHead(200, { "content-length": String(total) }));
      connection.write(bytes);
    });
    const response = await client.fetch(upstream.url);
    const connection = upstream.connections[0]!;
    // Let the server write all it can: the count settles once the socket stops taking bytes.
    let before = -1;
    while (connection.sent !== before) {
      before = connection.sent;
      await sleep(100);
    }
    // The kernel's buffers on a loopback pair hold a few MiB (a send buffer of up to 4 MiB, by
    // Linux's default tcp_wmem, and the receive window): past them, only a paused socket stalls.
    expect(connection.sent).toBeLessThan(8 * 1024 * 1024);
    const received = new Uint8Array(await response.arrayBuffer());
    expect(received.length).toBe(total);
    expect(Buffer.compare(received, bytes)).toBe(0);
  });
});

describe("socket fetch: aborts", () => {
  test("an abort before the head rejects with the signal's reason and closes the connection", async () => {
    const { upstream, client } = setUp(() => {});
    const controller = new AbortController();
    const pending = client.fetch(upstream.url, { signal: controller.signal });
    await until(() => upstream.connections[0]?.requests.length === 1, "the request");
    const reason = new Error("caller gave up");
    controller.abort(reason);
    expect(await rejection(pending)).toBe(reason);
    await upstream.connections[0]!.whenClosed;
  });

  test("an abort in the middle of the body errors the body's read with the reason and closes the connection", async () => {
    const { upstream, client } = setUp((_, connection) => connection.write(responseHead(200, { "content-length": "100" }) + "first part"));
    const controller = new AbortController();
    const response = await client.fetch(upstream.url, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("first part");
    const reason = new Error("caller gave up");
    controller.abort(reason);
    expect(await rejection(reader.read())).toBe(reason);
    await upstream.connections[0]!.whenClosed;
  });

  test("an already aborted signal rejects with its reason without connecting", async () => {
    const { upstream, client } = setUp(answerOk);
    const reason = new Error("too late");
    expect(await rejection(client.fetch(upstream.url, { signal: AbortSignal.abort(reason) }))).toBe(reason);
    await sleep(20);
    expect(upstream.connections).toHaveLength(0);
  });
});

describe("socket fetch: failures", () => {
  test("a refused connect rejects with code ECONNREFUSED", async () => {
    const closed = startKeepAliveUpstream(answerOk);
    closed.close();
    client = createSocketFetch(recordingFallback().fetch, {});
    expect((await rejection(client.fetch(`${closed.url}/`))).code).toBe("ECONNREFUSED");
  });

  test("an answer that is not HTTP/1.1 rejects with code MALFORMED_HTTP_RESPONSE and closes the connection", async () => {
    const { upstream, client } = setUp((_, connection) => connection.write("SSH-2.0-OpenSSH_9.6\r\n\r\n"));
    expect((await rejection(client.fetch(upstream.url))).code).toBe("MALFORMED_HTTP_RESPONSE");
    await upstream.connections[0]!.whenClosed;
  });

  test("a field value with a NUL, which no Response can hold, rejects with code MALFORMED_HTTP_RESPONSE rather than hanging", async () => {
    const { upstream, client } = setUp((_, connection) => connection.write(`HTTP/1.1 200 OK\r\nX-Id: a\0b\r\nContent-Length: 2\r\n\r\nok`));
    expect((await rejection(client.fetch(upstream.url))).code).toBe("MALFORMED_HTTP_RESPONSE");
    await upstream.connections[0]!.whenClosed;
  });

  test("a server that closes in the middle of a Content-Length body errors the body's read", async () => {
    const { upstream, client } = setUp((_, connection) => {
      connection.write(responseHead(200, { "content-length": "100" }) + "only this");
      connection.end();
    });
    const response = await client.fetch(upstream.url);
    expect((await rejection(response.text())).code).toBe("MALFORMED_HTTP_RESPONSE");
  });
});

describe("socket fetch: what goes to the fallback", () => {
  test.each<[string, (url: string) => [string | URL | Request, RequestInit?]]>([
    ["an https: URL", () => ["https://127.0.0.1:1/"]],
    ["a URL object", (url) => [new URL(url)]],
    ["a Request", (url) => [new Request(url)]],
    ["a streamed body", (url) => [url, { method: "POST", body: new Response("streamed").body }]],
    ["a URL with credentials", (url) => [url.replace("http://", "http://user:secret@")]],
  ])("%s goes to the fallback, untouched", async (_, call) => {
    const { upstream, client, fallback } = setUp(answerOk);
    const args = call(upstream.url);
    expect(await (await client.fetch(...args)).text()).toBe("from fallback");
    expect(fallback.calls).toEqual([args.length === 1 ? [args[0], undefined] : args]);
    expect(upstream.connections).toHaveLength(0);
  });

  test("with HTTP_PROXY set every call goes to the fallback", async () => {
    const { upstream, client, fallback } = setUp(answerOk, { HTTP_PROXY: "http://127.0.0.1:9" });
    expect(await (await client.fetch(upstream.url)).text()).toBe("from fallback");
    expect(fallback.calls).toHaveLength(1);
    expect(upstream.connections).toHaveLength(0);
  });

  test("with 2 requests in flight the 3rd goes to the fallback, and once they end the next is served again", async () => {
    const held: AcceptedConnection[] = [];
    const { upstream, client, fallback } = setUp((_, connection) => (held.length < 2 ? void held.push(connection) : connection.write(answerWith("later"))));
    const inFlight = [1, 2].map((n) => client.fetch(`${upstream.url}/${n}`));
    await until(() => held.length === 2, "2 requests at the server");
    expect(await (await client.fetch(`${upstream.url}/3`)).text()).toBe("from fallback");
    expect(fallback.calls.map(([url]) => url)).toEqual([`${upstream.url}/3`]);
    for (const connection of held) connection.write(answerWith("held"));
    expect(await Promise.all(inFlight.map(async (pending) => (await pending).text()))).toEqual(["held", "held"]);
    expect(await (await client.fetch(`${upstream.url}/4`)).text()).toBe("later");
    expect(fallback.calls).toHaveLength(1);
  });

  test("a call through the fallback counts as in flight until its head comes: with one there and one here, the next goes to the fallback too", async () => {
    const held: AcceptedConnection[] = [];
    let releaseFallback!: () => void;
    const calls: string[] = [];
    const slowFallback = (async (url: string) => {
      calls.push(url);
      if (calls.length === 1) await new Promise<void>((resolve) => (releaseFallback = resolve));
      return new Response("from fallback");
    }) as typeof fetch;
    upstream = startKeepAliveUpstream((_, connection) => (held.length < 1 ? void held.push(connection) : connection.write(answerWith("here"))));
    client = createSocketFetch(slowFallback, {});
    const secure = client.fetch("https://127.0.0.1:1/x");
    const here = client.fetch(`${upstream.url}/1`);
    await until(() => held.length === 1, "1 request at the server");
    expect(await (await client.fetch(`${upstream.url}/2`)).text()).toBe("from fallback");
    releaseFallback();
    held[0]!.write(answerWith("held"));
    expect(await (await secure).text()).toBe("from fallback");
    expect(await (await here).text()).toBe("held");
    expect(await (await client.fetch(`${upstream.url}/3`)).text()).toBe("here");
    expect(calls).toEqual(["https://127.0.0.1:1/x", `${upstream.url}/2`]);
  });
});
