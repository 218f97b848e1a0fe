/**
 * DESIGN 6: no secret (key, Authorization header) appears in an error message or a log line.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { CollectingLogger, createToken, expectError, unknownApiKey } from "./support.ts";

describe("error messages", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  test("an invalid key is not echoed, whichever way it was sent", async () => {
    const key = unknownApiKey();
    const secret = key.slice("sk-gw-".length);
    const responses = [
      await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${key}` } }),
      await gw.fetch("/v1/models", { headers: { "x-api-key": key } }),
      await gw.fetch("/v1/models", { headers: { "x-goog-api-key": key } }),
      await gw.fetch(`/v1/models?key=${key}`),
      await gw.fetch("/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: "{}" }),
    ];
    for (const response of responses) {
      const message = await expectError(response, 401, "authentication_error");
      expect(message).not.toContain(key);
      expect(message).not.toContain(secret.slice(0, 8));
    }
  });

  test("a malformed Authorization header is not echoed", async () => {
    const key = unknownApiKey();
    for (const header of [`Basic ${key}`, `Bearer ${key} ${key}`, `Token ${key}`]) {
      const message = await expectError(await gw.fetch("/v1/models", { headers: { authorization: header } }), 401, "authentication_error");
      expect(message).not.toContain(key);
    }
  });

  test("messages for disabled, revoked and wrong-role keys do not contain the key", async () => {
    const disabled = await createToken(gw);
    await gw.admin("PATCH", `/v1/admin/tokens/${disabled.tokenId}`, { status: "disabled" });
    const revoked = await createToken(gw);
    await gw.admin("DELETE", `/v1/admin/tokens/${revoked.tokenId}`);
    const user = await createToken(gw);

    const m1 = await expectError(await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${disabled.key}` } }), 401, "authentication_error");
    const m2 = await expectError(await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${revoked.key}` } }), 401, "authentication_error");
    const m3 = await expectError(await gw.fetch("/v1/admin/settings", { headers: { authorization: `Bearer ${user.key}` } }), 403, "permission_error");
    const m4 = await expectError(await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${gw.managementKey}` } }), 403, "permission_error");
    expect(m1).not.toContain(disabled.key);
    expect(m2).not.toContain(revoked.key);
    expect(m3).not.toContain(user.key);
    expect(m4).not.toContain(gw.managementKey);
  });

  test("the admin token listing never contains a key", async () => {
    const created = await createToken(gw);
    const listing = await gw.admin("GET", "/v1/admin/tokens");
    expect(listing.status).toBe(200);
    const text = JSON.stringify(listing.body);
    expect(text).not.toContain(created.key);
    expect(text).not.toContain(gw.managementKey);
    expect(text).not.toContain(gw.demoKey);
  });
});

describe("logs", () => {
  test("a run of failing requests leaves no presented key in any log entry", async () => {
    const log = new CollectingLogger();
    const gw = await startTestGateway({ log, env: { GATEWAY_LOG_REQUESTS: "1" } });
    const presented: string[] = [];
    try {
      const unknown = unknownApiKey();
      const viaQuery = unknownApiKey();
      const disabled = await createToken(gw);
      await gw.admin("PATCH", `/v1/admin/tokens/${disabled.tokenId}`, { status: "disabled" });
      const noChat = await createToken(gw, { permissions: ["images"] });
      const valid = await createToken(gw);
      presented.push(unknown, viaQuery, disabled.key, noChat.key, valid.key, gw.managementKey, gw.demoKey);

      const json = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });
      const statuses = [
        (await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${unknown}` } })).status,
        (await gw.fetch("/v1/models", { headers: { "x-api-key": unknown } })).status,
        (await gw.fetch("/v1/models", { headers: { "x-goog-api-key": unknown } })).status,
        (await gw.fetch(`/v1/models?key=${viaQuery}`)).status,
        (await gw.fetch("/v1/models", { headers: { authorization: `Basic ${unknown}` } })).status,
        (await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${disabled.key}` } })).status,
        (await gw.fetch("/v1/chat/completions", { method: "POST", headers: json(noChat.key), body: '{"model":"demo-chat","messages":[{"role":"user","content":"x"}]}' })).status,
        (await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${gw.managementKey}` } })).status,
        (await gw.fetch("/v1/admin/settings", { headers: { authorization: `Bearer ${valid.key}` } })).status,
        (await gw.fetch("/v1/chat/completions", { method: "POST", headers: json(valid.key), body: "{not json" })).status,
        (await gw.fetch("/v1/chat/completions", { method: "POST", headers: json(valid.key), body: '{"model":"no-such-model","messages":[{"role":"user","content":"x"}]}' })).status,
        (await gw.fetch(`/v1/nope?key=${viaQuery}`, { headers: { authorization: `Bearer ${valid.key}` } })).status,
      ];
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 403, 403, 403, 400, 404, 404]);

      // A server-side failure while a key is being looked up: the database is gone, so
      // resolving an unseen key throws and the gateway logs the failure (a 500).
      const duringFailure = unknownApiKey();
      presented.push(duringFailure);
      await gw.database.close();
      const failed = await gw.fetch("/v1/models", { headers: { authorization: `Bearer ${duringFailure}` } });
      const message = await expectError(failed, 500, "server_error");
      expect(message).not.toContain(duringFailure);
      expect(log.entries.length).toBeGreaterThan(0); // the logger is wired: the 500 was logged

      for (const entry of log.entries) {
        for (const key of presented) {
          expect(entry).not.toContain(key);
          expect(entry).not.toContain(key.slice(6, 20)); // nor a recognisable part of the secret
        }
      }
    } finally {
      await gw.close().catch(() => {});
    }
  });
});
