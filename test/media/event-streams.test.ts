import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { account, onlyUsageRowOf } from "../billing/_inprocess.ts";
import { sseFixtureEvents } from "../helpers/loopback-upstream.ts";
import { sleep } from "../helpers/common.ts";
import { startTestGateway } from "../helpers/gateway.ts";
import { createChannel, startOpenAiMediaUpstream } from "../helpers/openai-media-upstream.ts";
import { accountClient, collect, eventTypes, firstThenWait, fixtureBlocks, MODALITIES, MODELS, readsOf, send, sseAnswer, startEventStreamWorld, TARGETS, type EventStreamWorld } from "./_event-streams.ts";

/**
 * Speech (`stream_format: "sse"`), transcriptions and images (`stream`) streamed as OpenAI's
 * events, read by the official SDK: relayed from an openai channel event by event as they come,
 * made by the demo mock, settled once whatever ends them (see src/dispatch/media-dispatcher.ts).
 */

let world: EventStreamWorld;
beforeAll(async () => {
  world = await startEventStreamWorld();
});
afterAll(() => world.close());
beforeEach(() => {
  world.primary.reset();
  world.backup.reset();
});

const START = 10_000_000;
const cases = Object.values(MODALITIES).flatMap((modality) => TARGETS.map((target) => [modality.name, target, modality] as const));

describe.each(cases)("%s on the %s channel", (name, target, modality) => {
  const model = MODELS[name][target];

  test("the SDK reads its events to the end event; one usage row of 200, charged the whole request", async () => {
    const { id, client } = await accountClient(world.gw, START);
    const { events, response } = await modality.sdk(client, model);
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const { events: seen, error } = await collect(events);
    expect(error).toBeNull();
    if (target === "openai") expect(seen).toEqual(sseFixtureEvents(modality.fixture).map((event) => JSON.parse(event.data)));
    expect(seen.at(-1).type).toBe(modality.end);
    expect(seen.at(-1).usage.total_tokens).toBeGreaterThan(0);
    const row = await onlyUsageRowOf(world.gw, response);
    expect({ status: row.status, cost: row.cost_micros, stream: row.stream }).toEqual({ status: 200, cost: modality.cost[target], stream: 1 });
    expect((await account(world.gw, id)).balance_micros).toBe(START - modality.cost[target]);
  });
});

describe.each(Object.values(MODALITIES))("$name", (modality) => {
  const model = MODELS[modality.name].openai;

  test("each event is written as it comes: the first reaches the caller while the upstream still holds the rest", async () => {
    const release = Promise.withResolvers<void>();
    world.primary.setBehavior({ script: () => firstThenWait(fixtureBlocks(modality.fixture), release.promise) });
    const response = await send(world.gw, modality, world.gw.demoKey, model);
    const reader = response.body!.getReader();
    const first = await Promise.race([reader.read(), sleep(3_000).then(() => null)]);
    release.resolve();
    expect(first).not.toBeNull();
    expect(eventTypes(new TextDecoder().decode(first!.value))).toEqual([sseFixtureEvents(modality.fixture)[0]!.data].map((data) => JSON.parse(data).type));
    await reader.cancel();
  });

  test("from the mock, each event is written on its own, not batched with the next", async () => {
    // app.request: the body as the gateway writes it, with no socket between that could join writes.
    const { path, init } = modality.request(world.gw.demoKey, MODELS[modality.name].mock);
    const reads = await readsOf(await world.gw.app.request(path, init));
    expect(reads.map((read) => eventTypes(read).length)).toEqual(reads.map(() => 1));
    expect(reads.length).toBeGreaterThan(2);
    expect(eventTypes(reads.at(-1)!)).toEqual([modality.end]);
  });

  test("a client that hangs up after the first event: one usage row (499), charged as the whole form is, no hold left", async () => {
    const { id, key } = await accountClient(world.gw, START);
    const release = Promise.withResolvers<void>();
    world.primary.setBehavior({ script: () => firstThenWait(fixtureBlocks(modality.fixture), release.promise) });
    const controller = new AbortController();
    const response = await send(world.gw, modality, key, model, controller.signal);
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const row = await waitForRow(response);
    release.resolve();
    expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 499, cost: modality.hangUpCost });
    expect((await account(world.gw, id)).balance_micros).toBe(START - modality.hangUpCost);
  });

  test.each(["end", "abort"] as const)("an upstream that breaks off after two events (%s): an error event the SDK raises, one 502 row, not charged", async (streamEnd) => {
    const { id, client } = await accountClient(world.gw, START);
    world.primary.setBehavior({ cutAfterEvents: 2, streamEnd });
    const { events, response } = await modality.sdk(client, model);
    const { events: seen, error } = await collect(events);
    expect(seen.map((event) => event.type)).toEqual(sseFixtureEvents(modality.fixture).slice(0, 2).map((event) => JSON.parse(event.data).type));
    expect(error?.message).toContain("upstream stream ended before its last event");
    const row = await onlyUsageRowOf(world.gw, response);
    expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 502, cost: 0 });
    expect((await account(world.gw, id)).balance_micros).toBe(START);
  });

  test("an upstream whose first event is an error: the next channel serves the request, which is charged once", async () => {
    const { id, client } = await accountClient(world.gw, START);
    world.primary.setBehavior({ script: () => sseAnswer([`data: ${JSON.stringify({ error: { message: "The server is overloaded", type: "server_error" } })}\n\n`]) });
    const { events, response } = await modality.sdk(client, MODELS[modality.name].failover);
    const { events: seen, error } = await collect(events);
    expect(error).toBeNull();
    expect(seen).toEqual(sseFixtureEvents(modality.fixture).map((event) => JSON.parse(event.data)));
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect([world.primary.requests.length, world.backup.requests.length]).toEqual([1, 1]);
    const row = await onlyUsageRowOf(world.gw, response);
    expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 200, cost: modality.cost.openai });
    expect((await account(world.gw, id)).balance_micros).toBe(START - modality.cost.openai);
  });

  test("an upstream whose stream ends before any event, with no other channel: a 502 before the head, the hold refunded", async () => {
    const { id, key } = await accountClient(world.gw, START);
    world.primary.setBehavior({ script: () => sseAnswer([": keep-alive\n\n"]) });
    const response = await send(world.gw, modality, key, model);
    expect(response.status).toBe(502);
    expect((await response.json()).error).toMatchObject({ type: "upstream_error", code: 502, message: expect.stringContaining("before its last event") });
    const row = await onlyUsageRowOf(world.gw, response);
    expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 502, cost: 0 });
    expect((await account(world.gw, id)).balance_micros).toBe(START);
  });
});

test("an upstream silent past the idle limit before its first event: a 504 before the head, as a byte stream's silence is", async () => {
  const upstream = startOpenAiMediaUpstream();
  const gw = await startTestGateway({ env: { GATEWAY_STREAM_IDLE_TIMEOUT_MS: "200" } });
  try {
    await createChannel(gw, { name: "silent", type: "openai", base_url: upstream.url, api_key: "sk-silent", models: ["tts-silent"] });
    expect((await gw.admin("POST", "/v1/admin/prices", { model: "tts-silent", ...MODALITIES.speech.price })).status).toBe(200);
    // A comment gets the head out (Bun sends none before the body's first bytes); then silence.
    const never = new Promise<void>(() => {});
    upstream.setBehavior({ script: () => firstThenWait([": keep-alive\n\n"], never) });
    const response = await send(gw, MODALITIES.speech, gw.demoKey, "tts-silent");
    expect(response.status).toBe(504);
    expect((await response.json()).error).toMatchObject({ type: "upstream_timeout", code: 504, message: expect.stringContaining("sent nothing for 200 ms") });
    const row = await onlyUsageRowOf(gw, response);
    expect({ status: row.status, cost: row.cost_micros }).toEqual({ status: 504, cost: 0 });
  } finally {
    await gw.close();
    await upstream.close();
  }
});

/** The request's one usage row, once written, with the books balanced and no hold open. */
async function waitForRow(response: Response) {
  for (let tries = 0; tries < 100; tries++) {
    await world.gw.services.usage.flush();
    const rows = await world.gw.database.db.selectFrom("usage_logs").select("id").where("request_id", "=", response.headers.get("x-request-id")!).execute();
    if (rows.length > 0) break;
    await sleep(20);
  }
  return onlyUsageRowOf(world.gw, response);
}
