/**
 * The mock upstream bounds the work of one request, since it does that work on the gateway's
 * event loop: embeddings return at most 1,048,576 numbers (inputs x dimensions) and images
 * are at most 2048 pixels a side. Past that it answers as an upstream would, 400 naming the
 * limit; the hold is refunded.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createToken, expectError } from "../auth/support.ts";

let gw: TestGateway;
let account: { userId: string; key: string };
beforeAll(async () => {
  gw = await startTestGateway();
  account = await createToken(gw);
  const table = { "2048x2048/standard": 0.01, "2049x2048/standard": 0.01, "1024x2049/standard": 0.01 };
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "big-image", mode: "image", image_prices: table })).status).toBe(200);
  expect((await gw.admin("POST", "/v1/admin/channels", { name: "big images", type: "mock", models: ["big-image"] })).status).toBe(201);
});
afterAll(() => gw.close());

const post = (path: string, body: unknown) => gw.fetch(path, { method: "POST", headers: bearer(account.key), body: JSON.stringify(body) });
const balance = async () => (await gw.admin("GET", `/v1/admin/users/${account.userId}`)).body.balance;
const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i}`);

test("embeddings: 1024 inputs x 1025 dimensions → 400 naming the limit, nothing charged", async () => {
  const before = await balance();
  const message = await expectError(await post("/v1/embeddings", { model: "demo-embed", input: words(1024), dimensions: 1025 }), 400, "invalid_request_error");
  expect(message).toContain("at most 1048576 numbers (inputs x dimensions)");
  expect(message).toContain("1024 inputs x 1025 dimensions");
  expect(await balance()).toBe(before);
});

test("embeddings: 16 inputs x 65536 dimensions, the limit exactly, are served", async () => {
  const response = await post("/v1/embeddings", { model: "demo-embed", input: words(16), dimensions: 65_536, encoding_format: "base64" });
  expect(response.status).toBe(200);
  const data = (await response.json()).data;
  expect(data).toHaveLength(16);
  expect(Buffer.from(data[15].embedding, "base64").length).toBe(65_536 * 4);
});

test("images: a side of 2049 pixels → 400 naming the limit, nothing charged", async () => {
  const before = await balance();
  for (const size of ["2049x2048", "1024x2049"]) {
    const message = await expectError(await post("/v1/images/generations", { model: "big-image", prompt: "x", size }), 400, "invalid_request_error");
    expect(message).toBe(`The mock image model draws sides of at most 2048 pixels, not ${size}`);
  }
  expect(await balance()).toBe(before);
});

test("images: 2048x2048 is drawn", async () => {
  const response = await post("/v1/images/generations", { model: "big-image", prompt: "x", size: "2048x2048", response_format: "b64_json" });
  expect(response.status).toBe(200);
  const png = Buffer.from((await response.json()).data[0].b64_json, "base64");
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([2048, 2048]); // IHDR width and height
});
