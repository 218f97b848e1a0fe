/**
 * IDs and names refuse C0 control characters and DEL with a 400 naming the field: the
 * database driver reads TEXT back only up to a NUL, so a price stored for "fzbase\u0000x"
 * loaded as "fzbase" and made that model free, and names came back cut short.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createToken, expectError, postChat } from "../auth/support.ts";
import { expectError as expectAdminError } from "./_helpers.ts";

let gw: TestGateway;
let userId: string;
let tokenId: string;
let channelId: string;
beforeAll(async () => {
  gw = await startTestGateway();
  ({ userId, tokenId } = await createToken(gw));
  channelId = (await gw.admin("POST", "/v1/admin/channels", { name: "plain", type: "mock", models: ["plain-model"] })).body.id;
});
afterAll(() => gw.close());

const CONTROLS = ["\u0000", "\u0001", "\t", "\n", "\u001f", "\u007f"];
const MESSAGE = "must not contain control characters (U+0000 to U+001F or U+007F)";

/** [label, method, path, body with `x` where the bad text goes, the field the message names] */
const CASES: Array<[string, string, () => string, (x: string) => unknown, string]> = [
  ["price model", "POST", () => "/v1/admin/prices", (x) => ({ model: `fzbase${x}y`, input_per_million: 0, output_per_million: 0 }), "model"],
  ["channel name", "POST", () => "/v1/admin/channels", (x) => ({ name: `a${x}b`, type: "mock", models: ["m"] }), "name"],
  ["channel model", "POST", () => "/v1/admin/channels", (x) => ({ name: "c", type: "mock", models: ["m", `m${x}2`] }), "models[1]"],
  ["channel model_map target", "PATCH", () => `/v1/admin/channels/${channelId}`, (x) => ({ model_map: { alias: `up${x}` } }), "model_map.alias"],
  ["channel base_url", "PATCH", () => `/v1/admin/channels/${channelId}`, (x) => ({ base_url: `http://127.0.0.1/v1${x}` }), "base_url"],
  ["channel api_key", "PATCH", () => `/v1/admin/channels/${channelId}`, (x) => ({ api_key: `sk-${x}` }), "api_key"],
  ["token name (create)", "POST", () => "/v1/admin/tokens", (x) => ({ user_id: userId, name: `k${x}k` }), "name"],
  ["token name (update)", "PATCH", () => `/v1/admin/tokens/${tokenId}`, (x) => ({ name: `k${x}k` }), "name"],
  ["token models", "PATCH", () => `/v1/admin/tokens/${tokenId}`, (x) => ({ models: [`m${x}`] }), "models[0]"],
  ["token user_id", "POST", () => "/v1/admin/tokens", (x) => ({ user_id: `${userId}${x}`, name: "k" }), "user_id"],
  ["user email", "POST", () => "/v1/admin/users", (x) => ({ email: `a${x}b@example.test` }), "email"],
  ["user plan", "PATCH", () => `/v1/admin/users/${userId}`, (x) => ({ plan: `pro${x}` }), "plan"],
  ["top-up payment_method", "POST", () => "/v1/admin/topup", (x) => ({ user_id: userId, amount: 1, payment_method: `card${x}` }), "payment_method"],
  ["settings system_name", "PATCH", () => "/v1/admin/settings", (x) => ({ system_name: `Gate${x}way` }), "system_name"],
];

for (const [label, method, path, body, field] of CASES) {
  test(`${label} with a control character → 400 naming '${field}'`, async () => {
    for (const control of CONTROLS) {
      const response = await gw.admin(method, path(), body(control));
      expectAdminError(response, 400, "invalid_request_error");
      // The plan's own rule (a-z, 0-9, _ or -) already kept control characters out.
      if (field !== "plan") expect({ control, message: response.body.error.message }).toEqual({ control, message: `Invalid '${field}': ${MESSAGE}` });
      else expect(response.body.error.message).toContain("'plan'");
    }
  });
}

test("the price of 'fzbase' stays its own: 'fzbase\\u0000x' is refused, not stored as a second 'fzbase'", async () => {
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "fzbase", input_per_million: 5, output_per_million: 5 })).status).toBe(200);
  expect((await gw.admin("POST", "/v1/admin/prices", { model: "fzbase\u0000x", input_per_million: 0, output_per_million: 0 })).status).toBe(400);
  const prices = (await gw.admin("GET", "/v1/admin/prices")).body.prices.filter((p: any) => p.model.startsWith("fzbase"));
  expect(prices).toEqual([expect.objectContaining({ model: "fzbase", input_per_million: 5 })]);
});

test("a chat request's model with a control character → 400 naming 'model'", async () => {
  const message = await expectError(await postChat(gw, (await createToken(gw)).key, { model: "demo-chat\u0000x", messages: [{ role: "user", content: "hi" }] }), 400, "invalid_request_error");
  expect(message).toBe(`Invalid 'model': ${MESSAGE}`);
});

test("control: other Unicode is kept as sent (accents, emoji, C1 U+0080, U+2028)", async () => {
  const name = "Kanal é 😀 \u0080 \u2028 ende";
  const created = await gw.admin("POST", "/v1/admin/channels", { name, type: "mock", models: ["modèle-😀"] });
  expect({ status: created.status, body: created.body }).toEqual({ status: 201, body: expect.objectContaining({ name }) });
  const token = await gw.admin("PATCH", `/v1/admin/tokens/${tokenId}`, { name });
  expect(token.body.name).toBe(name);
});
