import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import OpenAI from "openai";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { createJsonLogger } from "../../src/lib/logger.ts";
import { KEEP_RESPONSES_MS } from "../../src/state/kept-responses.ts";
import { onlyUsageRowOf } from "../billing/_inprocess.ts";
import { createResponse, MODELS, openAiClient, rejectionOf } from "./_support.ts";

/**
 * Kept Responses live in the database: they outlast a restart, expire an hour after they were
 * made on every instance and are then swept away, are committed before their caller gets the
 * end of its answer, and a keep that cannot be written leaves the answer, and its bill, whole.
 */

const started: TestGateway[] = [];
/** A test gateway started as startTestGateway starts one, closed, and its folder removed, after the test. */
async function start(options: Parameters<typeof startTestGateway>[0] = {}): Promise<TestGateway> {
  const gw = await startTestGateway(options);
  started.push(gw);
  return gw;
}
afterEach(async () => {
  const dirs = new Set(started.map((gw) => gw.dir));
  for (const gw of started.splice(0)) await gw.close({ keepFiles: true }).catch(() => {});
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const keptRows = (gw: TestGateway, table: "kept_responses" | "kept_response_items" = "kept_responses") =>
  gw.database.sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`, [])!.n;

/** POST /v1/responses through `gw.app.request`: the body as the gateway makes it, read by the test. */
const postResponse = (gw: TestGateway, body: Record<string, unknown>) =>
  gw.app.request("/v1/responses", { method: "POST", headers: { ...bearer(gw.demoKey), "content-type": "application/json" }, body: JSON.stringify({ model: MODELS.mock, ...body }) });

test("a Response outlasts a restart: the new process continues and retrieves it", async () => {
  const before = await start();
  const made = await openAiClient(before, before.demoKey).responses.create({ model: MODELS.mock, input: "Turn one" });
  await before.close({ keepFiles: true });
  const after = await start({ dir: before.dir });
  const client = openAiClient(after, before.demoKey);
  expect(await client.responses.retrieve(made.id)).toEqual(made);
  const next = await client.responses.create({ model: MODELS.mock, input: "Turn two", previous_response_id: made.id });
  // The demo model counts the prompt it was given: the same as the whole conversation sent inline.
  const inline = await client.responses.create({ model: MODELS.mock, input: [{ role: "user", content: "Turn one" }, { role: "assistant", content: made.output_text }, { role: "user", content: "Turn two" }] });
  expect(next.usage!.input_tokens).toBe(inline.usage!.input_tokens);
});

test("an hour after it was made a Response is gone on every instance, and the sweep deletes its rows", async () => {
  let now = Date.now();
  const a = await start({ now: () => now });
  const b = await start({ dir: a.dir, now: () => now });
  const onA = openAiClient(a, a.demoKey);
  const onB = openAiClient(b, a.demoKey);
  const made = await onA.responses.create({ model: MODELS.mock, input: "Hello" });
  now += KEEP_RESPONSES_MS - 1;
  expect((await onB.responses.retrieve(made.id)).id).toBe(made.id);
  expect(await a.services.keptResponses.sweep()).toBe(0);
  now += 1;
  for (const client of [onA, onB]) {
    expect(await rejectionOf(client.responses.retrieve(made.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await rejectionOf(client.responses.create({ model: MODELS.mock, input: "Go on", previous_response_id: made.id }));
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
    expect(continued.message).toContain(`No response '${made.id}' is kept here`);
    expect(await rejectionOf(client.responses.create({ model: MODELS.mock, input: [{ type: "item_reference", id: made.output[0]!.id! }] }))).toBeInstanceOf(OpenAI.BadRequestError);
  }
  expect([keptRows(a), keptRows(a, "kept_response_items")]).toEqual([1, 1]);
  expect(await b.services.keptResponses.sweep()).toBe(1);
  expect([keptRows(a), keptRows(a, "kept_response_items")]).toEqual([0, 0]);
});

/** The statements of every transaction `gw` commits from now on, each transaction's in order. */
function recordTransactions(gw: TestGateway): string[][] {
  const committed: string[][] = [];
  let open: string[] | undefined;
  const { sql } = gw.database;
  const run = sql.run.bind(sql);
  sql.run = (text, params) => {
    if (/^BEGIN/.test(text)) open = [];
    const changed = run(text, params);
    if (text === "COMMIT" && open) committed.push(open);
    else open?.push(text);
    return changed;
  };
  return committed;
}

// A stream's Response is known only once its usage row is committed (the end event is rendered
// after the upstream's end), so it is kept in a commit of its own: one more at the end of a stream.
test("a lone request's Response answered whole is kept in the transaction of its usage row: one commit for both", async () => {
  const gw = await start();
  const transactions = recordTransactions(gw);
  const response = await postResponse(gw, { input: "Hello" });
  expect(response.status).toBe(200);
  const keeping = transactions.filter((statements) => statements.some((text) => text.startsWith("INSERT INTO kept_responses ")));
  expect(keeping).toHaveLength(1);
  expect(keeping[0]!.filter((text) => text.startsWith("INSERT INTO usage_logs "))).toHaveLength(1);
});

describe.each([[false], [true]])("streamed: %p", (stream) => {
  test("the Response is committed before its caller gets the end of the answer", async () => {
    const gw = await start();
    const response = await postResponse(gw, { input: "Hello", stream });
    expect(response.status).toBe(200);
    // Counted, synchronously, as the last of the body arrives: a client may send the next turn to another instance then.
    let keptAtEnd = -1;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!stream || text.includes("event: response.completed")) keptAtEnd = keptRows(gw);
    }
    expect(keptAtEnd).toBe(1);
    const id = stream ? /"id":"(resp_[^"]+)"/.exec(text)![1] : JSON.parse(text).id;
    expect(gw.database.sql.get<{ user_id: string }>("SELECT user_id FROM kept_responses WHERE id = ?", [id])).toBeDefined();
  });

  test("a Response the database refuses to keep leaves its request a 200, billed, and a warning naming it", async () => {
    const lines: string[] = [];
    const gw = await start({ log: createJsonLogger((line) => lines.push(line), Date.now) });
    gw.database.sql.run("CREATE TRIGGER kept_refused BEFORE INSERT ON kept_responses BEGIN SELECT RAISE(ABORT, 'refused by the test'); END", []);
    const response = await gw.fetch("/v1/responses", { method: "POST", headers: bearer(gw.demoKey), body: JSON.stringify({ model: MODELS.mock, input: "Hello", stream }) });
    expect(response.status).toBe(200);
    const text = await response.text();
    const id = stream ? /"id":"(resp_[^"]+)"/.exec(text)![1]! : JSON.parse(text).id;
    if (stream) expect(text).toContain("event: response.completed");
    expect((await onlyUsageRowOf(gw, response)).status).toBe(200);
    const warnings = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === "warn");
    expect(warnings).toEqual([expect.objectContaining({ message: "Response not kept", response_id: id, error: expect.stringContaining("refused by the test") })]);
    expect(keptRows(gw)).toBe(0);
    const continued = await rejectionOf(createResponse(openAiClient(gw, gw.demoKey), { model: MODELS.mock, input: "Go on", previous_response_id: id }, stream));
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
    expect(continued.message).toContain("database failed to write");
  });
});
