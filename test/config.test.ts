import { expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";

test("GATEWAY_MAX_UPSTREAM_BODY_BYTES is 64 MiB unless set", () => {
  expect(loadConfig({}).maxUpstreamBodyBytes).toBe(64 * 1024 * 1024);
  expect(loadConfig({ GATEWAY_MAX_UPSTREAM_BODY_BYTES: "65536" }).maxUpstreamBodyBytes).toBe(65_536);
});

test("GATEWAY_MAX_UPSTREAM_BODY_BYTES below 1024 is refused at start, naming the variable", () => {
  expect(() => loadConfig({ GATEWAY_MAX_UPSTREAM_BODY_BYTES: "1023" })).toThrow("invalid configuration: GATEWAY_MAX_UPSTREAM_BODY_BYTES");
});

test("GATEWAY_KEPT_RESPONSES_MAX_CHARS is 256 Mi unless set; below 1024, or not an integer, is refused at start", () => {
  expect(loadConfig({}).keptResponsesMaxChars).toBe(256 * 1024 * 1024);
  expect(loadConfig({ GATEWAY_KEPT_RESPONSES_MAX_CHARS: "1048576" }).keptResponsesMaxChars).toBe(1_048_576);
  for (const bad of ["1023", "2048.5", "lots"]) {
    expect(() => loadConfig({ GATEWAY_KEPT_RESPONSES_MAX_CHARS: bad })).toThrow("invalid configuration: GATEWAY_KEPT_RESPONSES_MAX_CHARS");
  }
});

test("GATEWAY_BODY_TIMEOUT_MS is 2 minutes unless set, and at least 1 ms", () => {
  expect(loadConfig({}).bodyTimeoutMs).toBe(120_000);
  expect(loadConfig({ GATEWAY_BODY_TIMEOUT_MS: "30000" }).bodyTimeoutMs).toBe(30_000);
  expect(() => loadConfig({ GATEWAY_BODY_TIMEOUT_MS: "0" })).toThrow("invalid configuration: GATEWAY_BODY_TIMEOUT_MS");
});

test("PORT is 8080 unless set; outside 0-65535 it is refused at start, before any database is made", () => {
  expect(loadConfig({}).port).toBe(8080);
  expect(loadConfig({ PORT: "65535" }).port).toBe(65_535);
  for (const bad of ["65536", "99999", "-1", "http"]) {
    expect(() => loadConfig({ PORT: bad })).toThrow("invalid configuration: PORT");
  }
});
