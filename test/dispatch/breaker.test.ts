import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";

let clock = Date.parse("2026-11-21T10:00:00Z");
let gw: TestGateway;
let flaky: OpenAiUpstream;
let steady: OpenAiUpstream;
let flakyId: string;

beforeAll(async () => {
  gw = await startTestGateway({ now: () => clock, env: { GATEWAY_BREAKER_FAILURES: "3", GATEWAY_BREAKER_COOLDOWN_MS: "30000" } });
  flaky = await startOpenAiUpstream({ status: 503 });
  steady = await startOpenAiUpstream();
  const high = await gw.admin("POST", "/v1/admin/channels", { name: "flaky", type: "openai", base_url: flaky.url, models: ["m"], priority: 10 });
  await gw.admin("POST", "/v1/admin/channels", { name: "steady", type: "openai", base_url: steady.url, models: ["m"], priority: 0 });
  flakyId = high.body.id;
});
afterAll(async () => {
  await gw.close();
  await flaky.close();
  await steady.close();
});

const chat = () =>
  gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) });

/** The flaky channel's status, as the listing shows it; the record of the channel alone must agree. */
async function flakyStatus(): Promise<string> {
  const list = await gw.admin("GET", "/v1/admin/channels");
  const listed = list.body.channels.find((c: { id: string }) => c.id === flakyId).status;
  expect((await gw.admin("GET", `/v1/admin/channels/${flakyId}`)).body.status).toBe(listed);
  return listed;
}

test("a channel that fails 3 times in a row cools down, is skipped, and comes back after a successful probe", async () => {
  for (let i = 0; i < 3; i++) {
    const response = await chat();
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
  }
  expect(flaky.requests.length).toBe(3);
  expect(await flakyStatus()).toBe("cooling");

  // While cooling, requests go straight to the other channel.
  const skipped = await chat();
  expect(skipped.headers.get("x-gateway-attempts")).toBe("1");
  expect(flaky.requests.length).toBe(3);

  // After the cooldown one request probes it; the upstream has recovered.
  flaky.setBehavior({ status: 200 });
  clock += 30_001;
  const probe = await chat();
  expect(probe.status).toBe(200);
  expect(probe.headers.get("x-gateway-channel")).toBe(flakyId);
  expect(flaky.requests.length).toBe(4);
  expect(await flakyStatus()).toBe("active");
});

test("a failed probe cools the channel again for twice as long; an admin's disabled is never undone", async () => {
  flaky.setBehavior({ status: 500 });
  for (let i = 0; i < 3; i++) await chat();
  expect(await flakyStatus()).toBe("cooling");
  // An edit that leaves the status alone shows the channel as it is: still cooling.
  expect((await gw.admin("PATCH", `/v1/admin/channels/${flakyId}`, { name: "flaky" })).body.status).toBe("cooling");
  clock += 30_001;
  await chat(); // the probe fails
  const probes = flaky.requests.length;
  clock += 30_001; // not yet: the cooldown doubled to 60 s
  await chat();
  expect(flaky.requests.length).toBe(probes);
  clock += 30_001;
  flaky.setBehavior({ status: 200 });
  await chat();
  expect(flaky.requests.length).toBe(probes + 1);
  expect(await flakyStatus()).toBe("active");

  await gw.admin("PATCH", `/v1/admin/channels/${flakyId}`, { status: "disabled" });
  clock += 600_000;
  const response = await chat();
  expect(response.headers.get("x-gateway-channel")).not.toBe(flakyId);
  expect(await flakyStatus()).toBe("disabled");
});

test("when every channel of a model is cooling, the caller gets 503 unavailable", async () => {
  await gw.admin("POST", "/v1/admin/channels", { name: "lonely", type: "openai", base_url: flaky.url, models: ["solo"] });
  flaky.setBehavior({ status: 502 });
  const ask = () =>
    gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model: "solo", messages: [{ role: "user", content: "hi" }] }) });
  for (let i = 0; i < 3; i++) expect((await ask()).status).toBe(502);
  const response = await ask();
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("30");
  expect((await response.json()).error.type).toBe("unavailable");
});

test("an upstream 429 pauses the channel for its Retry-After, without cooling it", async () => {
  const limited = await startOpenAiUpstream({ status: 429, headers: { "retry-after": "2" } });
  const created = await gw.admin("POST", "/v1/admin/channels", { name: "limited", type: "openai", base_url: limited.url, models: ["rl"] });
  const ask = () =>
    gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model: "rl", messages: [{ role: "user", content: "hi" }] }) });
  for (let i = 0; i < 4; i++) {
    const response = await ask();
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("2");
    expect((await response.json()).error.type).toBe("rate_limit_error");
  }
  // Only the first reached the upstream; the others waited out its Retry-After at the gateway.
  expect(limited.requests.length).toBe(1);
  const list = await gw.admin("GET", "/v1/admin/channels");
  expect(list.body.channels.find((c: { id: string }) => c.id === created.body.id).status).toBe("active");

  clock += 1_000;
  const halfway = await ask();
  expect(halfway.headers.get("retry-after")).toBe("1");
  limited.setBehavior({ status: 200 });
  clock += 1_001;
  expect((await ask()).status).toBe(200);
  expect(limited.requests.length).toBe(2);
  await limited.close();
});

test("while a channel is paused by a 429, requests go to the next one, and come back after the pause", async () => {
  const limited = await startOpenAiUpstream({ status: 429 });
  const spare = await startOpenAiUpstream();
  const first = await gw.admin("POST", "/v1/admin/channels", { name: "first", type: "openai", base_url: limited.url, models: ["pair"], priority: 10 });
  await gw.admin("POST", "/v1/admin/channels", { name: "spare", type: "openai", base_url: spare.url, models: ["pair"], priority: 0 });
  const ask = () =>
    gw.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model: "pair", messages: [{ role: "user", content: "hi" }] }) });
  const failedOver = await ask();
  expect(failedOver.status).toBe(200);
  expect(failedOver.headers.get("x-gateway-attempts")).toBe("2");
  const skipped = await ask();
  expect(skipped.headers.get("x-gateway-attempts")).toBe("1");
  expect(limited.requests.length).toBe(1);
  // No Retry-After from the upstream: a pause of 1 s.
  limited.setBehavior({ status: 200 });
  clock += 1_001;
  const back = await ask();
  expect(back.headers.get("x-gateway-channel")).toBe(first.body.id);
  await limited.close();
  await spare.close();
});

test("clients that hang up before the first byte do not count against the channel", async () => {
  const slow = await startOpenAiUpstream({ delayMs: 300 });
  const created = await gw.admin("POST", "/v1/admin/channels", { name: "slow", type: "openai", base_url: slow.url, models: ["slow-model"] });
  for (let i = 0; i < 4; i++) {
    const controller = new AbortController();
    const pending = gw.fetch("/v1/chat/completions", {
      method: "POST",
      headers: bearer(gw.demoKey),
      body: JSON.stringify({ model: "slow-model", messages: [{ role: "user", content: "hi" }] }),
      signal: controller.signal,
    });
    await Bun.sleep(30);
    controller.abort();
    await pending.catch(() => {});
  }
  await Bun.sleep(50);
  const list = await gw.admin("GET", "/v1/admin/channels");
  expect(list.body.channels.find((c: { id: string }) => c.id === created.body.id).status).toBe("active");
  slow.setBehavior({});
  const served = await gw.fetch("/v1/chat/completions", {
    method: "POST",
    headers: bearer(gw.demoKey),
    body: JSON.stringify({ model: "slow-model", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(served.status).toBe(200);
  await slow.close();
});
