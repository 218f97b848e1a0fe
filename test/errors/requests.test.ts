/**
 * Spec 7 / DESIGN 5: unknown paths, malformed and empty bodies, unknown models and bodies
 * over the size limit, each in the error shape with the type of its status.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { chatBody, createToken, expectError, postChat } from "../auth/support.ts";

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startTestGateway();
  key = (await createToken(gw)).key;
});
afterAll(() => gw.close());

const adminHeaders = () => ({ authorization: `Bearer ${gw.managementKey}`, "content-type": "application/json" });
const keyHeaders = () => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

describe("unknown endpoints: 404 not_found_error", () => {
  test("GET /v1/nope", async () => {
    await expectError(await gw.fetch("/v1/nope"), 404, "not_found_error");
  });

  test("POST /nope", async () => {
    await expectError(await gw.fetch("/nope", { method: "POST", body: "{}" }), 404, "not_found_error");
  });

  test("GET /v1/nope with a valid key is still 404", async () => {
    await expectError(await gw.fetch("/v1/nope", { headers: keyHeaders() }), 404, "not_found_error");
  });

  test("GET / and a deep unknown path", async () => {
    await expectError(await gw.fetch("/"), 404, "not_found_error");
    await expectError(await gw.fetch("/v1/chat/completions/extra/path", { method: "POST", headers: keyHeaders(), body: chatBody() }), 404, "not_found_error");
  });
});

describe("malformed and empty bodies: 400 invalid_request_error", () => {
  for (const [label, body] of [
    ["truncated JSON", '{"model":"demo-chat","messages":['],
    ["not JSON at all", "hello"],
    ["single quotes", "{'model':'demo-chat'}"],
  ] as const) {
    test(`chat with ${label}`, async () => {
      await expectError(await postChat(gw, key, body), 400, "invalid_request_error");
    });
  }

  test("chat with a JSON value that is not an object (array, string, null)", async () => {
    await expectError(await postChat(gw, key, "[]"), 400, "invalid_request_error");
    await expectError(await postChat(gw, key, '"hi"'), 400, "invalid_request_error");
    await expectError(await postChat(gw, key, "null"), 400, "invalid_request_error");
  });

  test("admin POST /v1/admin/users with malformed JSON", async () => {
    await expectError(await gw.fetch("/v1/admin/users", { method: "POST", headers: adminHeaders(), body: '{"email":' }), 400, "invalid_request_error");
  });

  test("admin POST /v1/admin/tokens with malformed JSON", async () => {
    await expectError(await gw.fetch("/v1/admin/tokens", { method: "POST", headers: adminHeaders(), body: "{user_id: x}" }), 400, "invalid_request_error");
  });

  test("chat with an empty body", async () => {
    await expectError(await postChat(gw, key, ""), 400, "invalid_request_error");
  });

  test("chat with no body at all", async () => {
    await expectError(await gw.fetch("/v1/chat/completions", { method: "POST", headers: keyHeaders() }), 400, "invalid_request_error");
  });

  test("chat with a whitespace-only body", async () => {
    await expectError(await postChat(gw, key, "  \n "), 400, "invalid_request_error");
  });

  test("admin POST with an empty body", async () => {
    await expectError(await gw.fetch("/v1/admin/users", { method: "POST", headers: adminHeaders(), body: "" }), 400, "invalid_request_error");
  });
});

describe("a field an endpoint does not take: 400 naming it as unknown", () => {
  for (const [path, method, body, field] of [
    ["/v1/admin/settings", "PATCH", { version: "9" }, "version"],
    ["/v1/admin/settings", "PATCH", { features: { dark_mode: true } }, "features.dark_mode"],
    ["/v1/admin/users", "POST", { email: "unknown-field@example.com", name: "Ann" }, "name"],
  ] as const) {
    test(`${method} ${path} with '${field}'`, async () => {
      const response = await gw.fetch(path, { method, headers: adminHeaders(), body: JSON.stringify(body) });
      expect(await expectError(response, 400, "invalid_request_error")).toBe(`Unknown field '${field}'`);
    });
  }
});

describe("unknown model: 404 not_found_error", () => {
  test("chat with a model no channel serves names the model", async () => {
    const message = await expectError(await postChat(gw, key, chatBody({ model: "no-such-model" })), 404, "not_found_error");
    expect(message).toContain("no-such-model");
  });

  test("chat stream with an unknown model is a 404 before any stream", async () => {
    const response = await postChat(gw, key, chatBody({ model: "no-such-model", stream: true }));
    await expectError(response, 404, "not_found_error");
  });
});

describe("body size limit: 413 request_too_large", () => {
  let small: TestGateway;
  let smallKey: string;
  beforeAll(async () => {
    small = await startTestGateway({ env: { GATEWAY_MAX_BODY_BYTES: "2048" } });
    smallKey = (await createToken(small)).key;
  });
  afterAll(() => small.close());

  const tenKb = () => chatBody({ messages: [{ role: "user", content: "x".repeat(10 * 1024) }] });

  test("a body under the limit is served", async () => {
    const response = await postChat(small, smallKey, chatBody());
    expect(response.status).toBe(200);
  });

  test("a 10 KB body with Content-Length is 413", async () => {
    const message = await expectError(await postChat(small, smallKey, tenKb()), 413, "request_too_large");
    expect(message).toContain("2048");
  });

  test("a 10 KB body on an admin POST is 413", async () => {
    const response = await small.fetch("/v1/admin/users", {
      method: "POST",
      headers: { authorization: `Bearer ${small.managementKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "big@example.com", pad: "x".repeat(10 * 1024) }),
    });
    await expectError(response, 413, "request_too_large");
  });

  test("a 10 KB chunked body without Content-Length is 413", async () => {
    const bytes = new TextEncoder().encode(tenKb());
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 1024) controller.enqueue(bytes.slice(i, i + 1024));
        controller.close();
      },
    });
    const response = await small.fetch("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${smallKey}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    await expectError(response, 413, "request_too_large");
  });

  test("a small chunked body without Content-Length is served (the stream is read correctly)", async () => {
    const bytes = new TextEncoder().encode(chatBody());
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 10));
        controller.enqueue(bytes.slice(10));
        controller.close();
      },
    });
    const response = await small.fetch("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${smallKey}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("chat.completion");
  });

  test("fetch really sends a ReadableStream body chunked, without Content-Length", async () => {
    // Guards the two tests above: they only test the chunked path if the client sends it.
    let seen: { length: string | null; encoding: string | null } | null = null;
    const echo = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(request) {
        seen = { length: request.headers.get("content-length"), encoding: request.headers.get("transfer-encoding") };
        return new Response("ok");
      },
    });
    try {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(10));
          controller.close();
        },
      });
      await (await fetch(`http://127.0.0.1:${echo.port}/`, { method: "POST", body, duplex: "half" } as RequestInit)).text();
    } finally {
      await echo.stop(true);
    }
    expect(seen!).toEqual({ length: null, encoding: "chunked" });
  });
});
