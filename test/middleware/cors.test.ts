import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { loadConfig } from "../../src/config.ts";

/**
 * Browsers call the gateway as the official SDKs do there (the openai SDK's
 * dangerouslyAllowBrowser, Anthropic's anthropic-dangerous-direct-browser-access): a preflight
 * first, then the request, and the page reads the answer and its headers only if the gateway
 * allows its origin. GATEWAY_CORS_ORIGINS: any origin by default, a list, or none.
 */

const APP = "https://app.example.test";
const CHAT = JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "Hi" }] });
/** The preflight a browser sends before the openai SDK's POST. */
const preflight = (gw: TestGateway, origin: string, path = "/v1/chat/completions") =>
  gw.fetch(path, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type,x-stainless-os" },
  });

describe("with the default, any origin", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  test("a preflight is answered 204 without a key, allowing the method and the headers asked for", async () => {
    const response = await preflight(gw, APP);
    expect(response.status).toBe(204);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": expect.stringContaining("POST"),
      "access-control-allow-headers": "authorization,content-type,x-stainless-os",
      "access-control-max-age": "86400",
    });
  });

  test("a browser's chat, stream and error answers may be read by the page, headers included", async () => {
    const plain = await gw.fetch("/v1/chat/completions", { method: "POST", headers: { ...bearer(gw.demoKey), origin: APP }, body: CHAT });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("access-control-allow-origin")).toBe("*");
    expect(plain.headers.get("access-control-expose-headers")).toBe("*");
    const stream = await gw.fetch("/v1/chat/completions", { method: "POST", headers: { ...bearer(gw.demoKey), origin: APP }, body: JSON.stringify({ ...JSON.parse(CHAT), stream: true }) });
    expect(stream.headers.get("access-control-allow-origin")).toBe("*");
    await stream.text();
    const refused = await gw.fetch("/v1/chat/completions", { method: "POST", headers: { authorization: "Bearer sk-gw-wrong", origin: APP }, body: CHAT });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    const unknown = await gw.fetch("/v1/nowhere", { headers: { origin: APP } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("a request without an Origin, as from every server-side client, gets no CORS header", async () => {
    const response = await gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: CHAT });
    expect(response.status).toBe(200);
    expect([...response.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([]);
  });
});

describe("with a list of origins", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ env: { GATEWAY_CORS_ORIGINS: `${APP}, http://localhost:3000` } });
  });
  afterAll(() => gw.close());

  test("a listed origin is named back, with Vary: Origin", async () => {
    const response = await preflight(gw, "http://localhost:3000");
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    expect(response.headers.get("vary")).toBe("Origin");
    const chat = await gw.fetch("/v1/chat/completions", { method: "POST", headers: { ...bearer(gw.demoKey), origin: APP }, body: CHAT });
    expect(chat.headers.get("access-control-allow-origin")).toBe(APP);
    expect(chat.headers.get("vary")).toContain("Origin");
  });

  test("another origin is allowed nothing: the browser keeps the answer from the page", async () => {
    const response = await preflight(gw, "https://elsewhere.test");
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const chat = await gw.fetch("/v1/chat/completions", { method: "POST", headers: { ...bearer(gw.demoKey), origin: "https://elsewhere.test" }, body: CHAT });
    expect(chat.headers.get("access-control-allow-origin")).toBeNull();
  });
});

test("with none, a preflight is not answered and no answer carries CORS headers", async () => {
  const gw = await startTestGateway({ env: { GATEWAY_CORS_ORIGINS: "none" } });
  try {
    expect((await preflight(gw, APP)).headers.get("access-control-allow-origin")).toBeNull();
    const chat = await gw.fetch("/v1/chat/completions", { method: "POST", headers: { ...bearer(gw.demoKey), origin: APP }, body: CHAT });
    expect(chat.status).toBe(200);
    expect(chat.headers.get("access-control-allow-origin")).toBeNull();
  } finally {
    await gw.close();
  }
});

test("GATEWAY_CORS_ORIGINS: *, none or a list of origins, written as a browser sends them; anything else is refused at start", () => {
  expect(loadConfig({}).corsOrigins).toBe("*");
  expect(loadConfig({ GATEWAY_CORS_ORIGINS: "none" }).corsOrigins).toBe("none");
  expect(loadConfig({ GATEWAY_CORS_ORIGINS: "https://a.test,http://localhost:3000" }).corsOrigins).toEqual(["https://a.test", "http://localhost:3000"]);
  expect(loadConfig({ GATEWAY_CORS_ORIGINS: "HTTPS://App.Example.test:443" }).corsOrigins).toEqual(["https://app.example.test"]);
  for (const bad of ["a.test", "https://a.test/path", "*, https://a.test"]) {
    expect(() => loadConfig({ GATEWAY_CORS_ORIGINS: bad })).toThrow("invalid configuration: GATEWAY_CORS_ORIGINS");
  }
});
