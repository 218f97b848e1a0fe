import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { jsonFixture, startOpenAiUpstream, type OpenAiUpstream } from "../helpers/openai-upstream.ts";
import { createJsonLogger } from "../../src/lib/logger.ts";

let clock = Date.parse("2026-11-21T10:00:00Z");
let gw: TestGateway;
let flaky: OpenAiUpstream;
let steady: OpenAiUpstream;
let flakyId: string;
/** The gateway's log lines: an operator is told when a channel cools and when it is back. */
const logged: Record<string, unknown>[] = [];
const breakerLines = () => logged.filter((line) => String(line.message).startsWith("channel "));

beforeAll(async () => {
  const log = createJsonLogger((line) => logged.push(JSON.parse(line)), () => clock);
  gw = await startTestGateway({ now: () => clock, log, env: { GATEWAY_BREAKER_FAILURES: "3", GATEWAY_BREAKER_COOLDOWN_MS: "30000" } });
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

const chat = (model = "m", signal?: AbortSignal, instance = gw) =>
  instance.fetch("/v1/chat/completions", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }), signal });

/** The flaky channel's status, as the listing shows it; the record of the channel alone must agree. */
async function flakyStatus(): Promise<string> {
  const listed = await statusOf(flakyId);
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
  expect(breakerLines()).toEqual([
    expect.objectContaining({ level: "warn", message: "channel cooling", channel_id: flakyId, failures: 3, cooldown_ms: 30_000, error: expect.stringContaining("503") }),
  ]);

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
  expect(breakerLines().at(-1)).toMatchObject({ level: "info", message: "channel back from cooling", channel_id: flakyId });
});

test("a failed probe cools the channel again for twice as long; an admin's disabled is never undone", async () => {
  flaky.setBehavior({ status: 500 });
  for (let i = 0; i < 3; i++) await chat();
  expect(await flakyStatus()).toBe("cooling");
  clock += 30_001;
  await chat(); // the probe fails
  expect(breakerLines().at(-1)).toMatchObject({ level: "warn", message: "channel cooling: its probe failed", channel_id: flakyId, cooldown_ms: 60_000 });
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

test("while one channel of a priority cools, the others of that priority take its share before a lower priority is tried", async () => {
  const failing = await startOpenAiUpstream({ status: 500 });
  const sibling = await startOpenAiUpstream();
  const lower = await startOpenAiUpstream();
  const create = (name: string, url: string, priority: number) => gw.admin("POST", "/v1/admin/channels", { name, type: "openai", base_url: url, models: ["share"], priority }).then((r) => r.body.id as string);
  const failingId = await create("share failing", failing.url, 5);
  const siblingId = await create("share sibling", sibling.url, 5);
  await create("share lower", lower.url, 0);
  // Each request tries the failing channel first half of the time; three failures cool it.
  for (let i = 0; i < 100 && failing.requests.length < 3; i++) expect((await chat("share")).headers.get("x-gateway-channel")).toBe(siblingId);
  expect(await statusOf(failingId)).toBe("cooling");
  for (let i = 0; i < 20; i++) {
    const response = await chat("share");
    expect(response.headers.get("x-gateway-channel")).toBe(siblingId);
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
  }
  expect(lower.requests).toHaveLength(0);
  await Promise.all([failing.close(), sibling.close(), lower.close()]);
});

test("a Retry-After given as an HTTP date pauses the channel until then; one in fractional seconds reaches the caller rounded up", async () => {
  clock = Math.ceil(clock / 1000) * 1000;
  const dated = await startOpenAiUpstream({ status: 429, headers: { "retry-after": new Date(clock + 20_000).toUTCString() } });
  const fractional = await startOpenAiUpstream({ status: 429, headers: { "retry-after": "0.5" } });
  await gw.admin("POST", "/v1/admin/channels", { name: "dated", type: "openai", base_url: dated.url, models: ["dated"] });
  await gw.admin("POST", "/v1/admin/channels", { name: "fractional", type: "openai", base_url: fractional.url, models: ["fractional"] });
  const first = await chat("dated");
  expect(first.status).toBe(429);
  expect(first.headers.get("retry-after")).toBe("20");
  clock += 19_000;
  const paused = await chat("dated");
  expect(paused.headers.get("retry-after")).toBe("1");
  expect(dated.requests).toHaveLength(1);

  const rounded = await chat("fractional");
  expect(rounded.status).toBe(429);
  expect(rounded.headers.get("retry-after")).toBe("1");
  await dated.close();
  await fractional.close();
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

test("a request let through before the cool-down that ends while the probe is out opens no second probe", async () => {
  // The gated upstream holds each request until the test answers it; while `failFast`, it answers 500 at once.
  const held: ((response: Response) => void)[] = [];
  let failFast = false;
  const gated = await startOpenAiUpstream({
    script: () => (failFast ? Response.json({ error: { message: "down" } }, { status: 500 }) : new Promise<Response>((answer) => held.push(answer))),
  });
  const spare = await startOpenAiUpstream();
  const gatedId = (await gw.admin("POST", "/v1/admin/channels", { name: "gated", type: "openai", base_url: gated.url, models: ["gm"], priority: 10 })).body.id;
  await gw.admin("POST", "/v1/admin/channels", { name: "gated spare", type: "openai", base_url: spare.url, models: ["gm"], priority: 0 });

  // A long request is let through, then the channel fails three times and cools.
  const client = new AbortController();
  const early = chat("gm", client.signal).catch(() => null);
  while (held.length < 1) await Bun.sleep(5);
  failFast = true;
  for (let i = 0; i < 3; i++) expect((await chat("gm")).headers.get("x-gateway-attempts")).toBe("2");
  expect(await statusOf(gatedId)).toBe("cooling");

  // The cool-down ends: one request probes, and the upstream holds it.
  failFast = false;
  clock += 30_001;
  const probe = chat("gm");
  while (held.length < 2) await Bun.sleep(5);

  // The early request's client leaves; its usage row (499) is written after the breaker heard of it.
  client.abort();
  await early;
  for (let i = 0; i < 200 && !(await usageStatuses("gm")).includes(499); i++) await Bun.sleep(10);
  expect(await usageStatuses("gm")).toContain(499);

  // The probe is still out: the next request skips the channel instead of probing it a second time.
  failFast = true;
  const next = await chat("gm");
  expect(next.headers.get("x-gateway-attempts")).toBe("1");
  expect(gated.requests).toHaveLength(5);

  held[1]!(Response.json(jsonFixture("openai-chat-completion.json")));
  expect((await probe).headers.get("x-gateway-channel")).toBe(gatedId);
  expect(await statusOf(gatedId)).toBe("active");
  await gated.close();
  await spare.close();
});

test("an admin's edit ends a cool-down at once, on every instance sharing the database", async () => {
  const other = await startTestGateway({ dir: gw.dir, now: () => clock, env: { GATEWAY_BREAKER_FAILURES: "3", GATEWAY_BREAKER_COOLDOWN_MS: "30000" } });
  other.services.changes.start(20);
  const broken = await startOpenAiUpstream({ status: 500 });
  try {
    const id = (await gw.admin("POST", "/v1/admin/channels", { name: "edited", type: "openai", base_url: broken.url, models: ["em"] })).body.id;
    await settles(() => statusOf(id, other), "active");
    for (const instance of [gw, other]) {
      for (let i = 0; i < 3; i++) expect((await chat("em", undefined, instance)).status).toBe(502);
      expect(await statusOf(id, instance)).toBe("cooling");
    }

    // The operator fixed the upstream and says so: the channel serves at once, here and on the other instance.
    broken.setBehavior({});
    const patched = await gw.admin("PATCH", `/v1/admin/channels/${id}`, { status: "active" });
    expect(patched.body.status).toBe("active");
    expect(await statusOf(id)).toBe("active");
    expect((await chat("em")).headers.get("x-gateway-channel")).toBe(id);
    expect(await settles(() => statusOf(id, other), "active")).toBe("active");
    expect((await chat("em", undefined, other)).headers.get("x-gateway-channel")).toBe(id);
  } finally {
    await other.close();
    await broken.close();
  }
});

async function statusOf(id: string, instance = gw): Promise<string> {
  const list = await instance.admin("GET", "/v1/admin/channels");
  return list.body.channels.find((c: { id: string }) => c.id === id)?.status;
}

/** `read()` until it gives `expected`, for up to 2 s (another instance follows within its cache poll); the last value read. */
async function settles<T>(read: () => Promise<T>, expected: T): Promise<T> {
  let seen = await read();
  for (const deadline = Date.now() + 2_000; seen !== expected && Date.now() < deadline; seen = await read()) await Bun.sleep(10);
  return seen;
}

async function usageStatuses(model: string): Promise<number[]> {
  const listed = await gw.admin("GET", "/v1/admin/usage?limit=200");
  return listed.body.usage.filter((row: { model: string }) => row.model === model).map((row: { status: number }) => row.status);
}

test("a wall clock stepped back (an NTP correction) lengthens neither a cool-down nor a 429 pause", async () => {
  const upstream = await startOpenAiUpstream({ status: 502 });
  try {
    const id = (await gw.admin("POST", "/v1/admin/channels", { name: "stepped", type: "openai", base_url: upstream.url, models: ["sb"] })).body.id;
    for (let i = 0; i < 3; i++) expect((await chat("sb")).status).toBe(502);
    clock -= 3_600_000;
    const cooling = await chat("sb");
    expect(cooling.status).toBe(503);
    expect(cooling.headers.get("retry-after")).toBe("30");
    upstream.setBehavior({});
    clock += 30_001;
    expect((await chat("sb")).headers.get("x-gateway-channel")).toBe(id);
    expect(await statusOf(id)).toBe("active");

    upstream.setBehavior({ status: 429, headers: { "retry-after": "2" } });
    expect((await chat("sb")).status).toBe(429);
    clock -= 3_600_000;
    expect((await chat("sb")).headers.get("retry-after")).toBe("2");
    upstream.setBehavior({});
    clock += 2_001;
    expect((await chat("sb")).status).toBe(200);
  } finally {
    await upstream.close();
  }
});
