/**
 * Spec 4.6–4.9, 7, 8 and DESIGN.md section 5: every bad input to the JSON media endpoints
 * (embeddings, rerank, images, speech) is a 4xx in the error shape, decided before any hold
 * or upstream call, so it leaves no usage row, no hold and no ledger row behind. Permission
 * and key checks of all five media endpoints are at the end.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { adminCreateToken, adminCreateUser } from "../helpers/common.ts";
import { expectError } from "../auth/support.ts";
import { checkLedger } from "../../src/billing/check-ledger.ts";

let gw: TestGateway;
/** The account every refused request is sent from: nothing may ever be written for it. */
let refusedUser: { id: string; key: string };
/** A separate account for the requests that must succeed. */
let okKey: string;
let chatOnlyKey: string;

const START_BALANCE_MICROS = 5_000_000;

beforeAll(async () => {
  gw = await startTestGateway();
  const user = await adminCreateUser(gw, { email: `v-${crypto.randomUUID()}@example.test`, plan: "enterprise", balance: START_BALANCE_MICROS / 1e6 });
  refusedUser = { id: user.id, key: (await adminCreateToken(gw, { user_id: user.id, name: "all" })).key };
  const okUser = await adminCreateUser(gw, { email: `ok-${crypto.randomUUID()}@example.test`, plan: "enterprise", balance: 5 });
  okKey = (await adminCreateToken(gw, { user_id: okUser.id, name: "ok" })).key;
  chatOnlyKey = (await adminCreateToken(gw, { user_id: user.id, name: "chat only", permissions: ["chat"] })).key;
});
afterAll(() => gw.close());

function post(path: string, body: unknown, key = refusedUser.key): Promise<Response> {
  return gw.fetch(path, { method: "POST", headers: bearer(key), body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** Nothing was written for the refused account: no usage row, no hold, no ledger row beyond its opening top-up. */
async function expectNothingWritten(): Promise<void> {
  await gw.services.usage.flush();
  const db = gw.database.db;
  const rows = await db.selectFrom("usage_logs").select("id").where("user_id", "=", refusedUser.id).execute();
  const holds = await db.selectFrom("holds").select("id").where("user_id", "=", refusedUser.id).execute();
  const ledger = await db.selectFrom("ledger").select("kind").where("user_id", "=", refusedUser.id).execute();
  const user = await db.selectFrom("users").select("balance_micros").where("id", "=", refusedUser.id).executeTakeFirstOrThrow();
  expect({ rows: rows.length, holds: holds.length, ledger: ledger.map((l) => l.kind), balance: user.balance_micros }).toEqual({
    rows: 0,
    holds: 0,
    ledger: ["topup"],
    balance: START_BALANCE_MICROS,
  });
}

/** Posts `body`, expects the error shape with `status`, a message containing `mentions`, and no trace left. */
async function refused(path: string, body: unknown, mentions: string, status = 400): Promise<void> {
  const type = { 400: "invalid_request_error", 404: "not_found_error" }[status as 400 | 404];
  const message = await expectError(await post(path, body), status, type);
  expect(message).toContain(mentions);
  await expectNothingWritten();
}

const EMBED = { model: "demo-embed", input: "hello" };
describe("POST /v1/embeddings", () => {
  const cases: [string, unknown, string][] = [
    ["missing model", { input: "hello" }, "'model' is required"],
    ["input missing", { model: "demo-embed" }, "'input' is required"],
    ["input empty string", { ...EMBED, input: "" }, "'input'"],
    ["input empty array", { ...EMBED, input: [] }, "'input'"],
    ["input [\"\"]", { ...EMBED, input: [""] }, "'input[0]'"],
    ["token IDs that are not integers", { ...EMBED, input: [1, 2.5] }, "'input[1]': token IDs must be integers"],
    ["a negative token ID", { ...EMBED, input: [[1], [-1]] }, "'input[1][0]': token IDs must not be negative"],
    ["an empty token-ID array in a batch", { ...EMBED, input: [[1], []] }, "'input[1]': must not be an empty array"],
    ["texts and token IDs mixed", { ...EMBED, input: ["a", 1] }, "'input"],
    ["input a number", { ...EMBED, input: 5 }, "'input'"],
    ["encoding_format hex", { ...EMBED, encoding_format: "hex" }, "'encoding_format'"],
    ["dimensions 0", { ...EMBED, dimensions: 0 }, "'dimensions'"],
    ["dimensions 1.5", { ...EMBED, dimensions: 1.5 }, "'dimensions'"],
    ["model a number", { ...EMBED, model: 7 }, "'model'"],
    ["a non-JSON body", "input=hello", "not valid JSON"],
    ["an empty body", "", "empty"],
    ["a JSON null", "null", "must be a JSON object"],
    ["a JSON array", "[]", "must be a JSON object"],
    ["a chat model (wrong mode)", { ...EMBED, model: "demo-chat" }, "demo-chat"],
  ];
  for (const [label, body, mentions] of cases) test(`${label} → 400`, () => refused("/v1/embeddings", body, mentions));

  test("a JSON body over the 10 MB limit → 413 request_too_large", async () => {
    expect(gw.config.maxBodyBytes).toBe(10 * 1024 * 1024);
    await expectError(await post("/v1/embeddings", { ...EMBED, input: "a".repeat(11 * 1024 * 1024) }), 413, "request_too_large");
    await expectNothingWritten();
  });

  test("an unknown model → 404 not_found_error", () => refused("/v1/embeddings", { ...EMBED, model: "no-such-model" }, "no-such-model", 404));

  test("an embedding model on /v1/chat/completions → 400 naming the model", () =>
    refused("/v1/chat/completions", { model: "demo-embed", messages: [{ role: "user", content: "hi" }] }, "demo-embed"));

  test("control: the same request with valid fields succeeds", async () => {
    const response = await post("/v1/embeddings", { ...EMBED, dimensions: 8, encoding_format: "float" }, okKey);
    expect(response.status).toBe(200);
    expect((await response.json()).data[0].embedding).toHaveLength(8);
  });
});

const RERANK = { model: "demo-rerank", query: "river", documents: ["a river", "a city"] };
describe("POST /v1/rerank", () => {
  const cases: [string, unknown, string][] = [
    ["missing query", { model: "demo-rerank", documents: ["a"] }, "'query' is required"],
    ["empty query", { ...RERANK, query: "" }, "'query'"],
    ["missing documents", { model: "demo-rerank", query: "q" }, "'documents' is required"],
    ["documents []", { ...RERANK, documents: [] }, "'documents'"],
    ["documents not strings", { ...RERANK, documents: ["a", 1] }, "'documents[1]'"],
    ["documents objects", { ...RERANK, documents: [{ text: "a" }] }, "'documents[0]'"],
    ["top_n 0", { ...RERANK, top_n: 0 }, "'top_n'"],
    ["top_n 1.5", { ...RERANK, top_n: 1.5 }, "'top_n'"],
    ["return_documents \"yes\"", { ...RERANK, return_documents: "yes" }, "'return_documents'"],
    ["an embedding model (wrong mode)", { ...RERANK, model: "demo-embed" }, "demo-embed"],
  ];
  for (const [label, body, mentions] of cases) test(`${label} → 400`, () => refused("/v1/rerank", body, mentions));

  test("control: top_n equal to the number of documents is accepted", async () => {
    const response = await post("/v1/rerank", { ...RERANK, top_n: 2, return_documents: true }, okKey);
    expect(response.status).toBe(200);
    expect((await response.json()).results.map((r: any) => r.document.text)).toEqual(["a river", "a city"]);
  });

  test("top_n larger than the number of documents returns them all, as Cohere and Jina do (LangChain sends 3 by default)", async () => {
    const response = await post("/v1/rerank", { ...RERANK, top_n: 3, return_documents: true }, okKey);
    expect(response.status).toBe(200);
    expect((await response.json()).results.map((r: any) => r.document.text)).toEqual(["a river", "a city"]);
  });
});

const IMAGE = { model: "demo-image", prompt: "a lighthouse at dusk" };
describe("POST /v1/images/generations", () => {
  const cases: [string, unknown, string][] = [
    ["prompt missing", { model: "demo-image" }, "'prompt' is required"],
    ["prompt empty", { ...IMAGE, prompt: "" }, "'prompt'"],
    ["n 0", { ...IMAGE, n: 0 }, "'n'"],
    ["n 11", { ...IMAGE, n: 11 }, "'n'"],
    ["n \"2\"", { ...IMAGE, n: "2" }, "'n'"],
    ["n 1.5", { ...IMAGE, n: 1.5 }, "'n'"],
    ["size 1024x", { ...IMAGE, size: "1024x" }, "'size'"],
    ["size abc", { ...IMAGE, size: "abc" }, "'size'"],
    ["size x1024", { ...IMAGE, size: "x1024" }, "'size'"],
    ["size 0x0", { ...IMAGE, size: "0x0" }, "'size'"],
    ["size 10000x1024 (a side of 5 digits)", { ...IMAGE, size: "10000x1024" }, "sides of 1 to 9999 pixels"],
    ["size as a number", { ...IMAGE, size: 1024 }, "'size'"],
    ["quality ultra", { ...IMAGE, quality: "ultra" }, "'quality'"],
    ["style bold", { ...IMAGE, style: "bold" }, "'style'"],
    ["response_format png", { ...IMAGE, response_format: "png" }, "'response_format'"],
    ["stream \"true\" (a string)", { ...IMAGE, stream: "true" }, "'stream'"],
    ["partial_images 4", { ...IMAGE, stream: true, partial_images: 4 }, "'partial_images'"],
    ["partial_images -1", { ...IMAGE, stream: true, partial_images: -1 }, "'partial_images'"],
    ["partial_images 1.5", { ...IMAGE, stream: true, partial_images: 1.5 }, "'partial_images'"],
    ["a speech model (wrong mode)", { ...IMAGE, model: "demo-tts" }, "demo-tts"],
  ];
  for (const [label, body, mentions] of cases) test(`${label} → 400`, () => refused("/v1/images/generations", body, mentions));

  test("a well-formed size demo-image does not make (256x256) → 400 naming the sizes it makes", async () => {
    const message = await expectError(await post("/v1/images/generations", { ...IMAGE, size: "256x256" }), 400, "invalid_request_error");
    expect(message).toContain("'size'");
    for (const size of ["1024x1024", "1792x1024", "1024x1792"]) expect(message).toContain(size);
    expect(message).not.toContain("256x256,");
    await expectNothingWritten();
  });
});

const SPEECH = { model: "demo-tts", input: "Hello there." };
describe("POST /v1/audio/speech", () => {
  const cases: [string, unknown, string][] = [
    ["input missing", { model: "demo-tts" }, "'input' is required"],
    ["input empty", { ...SPEECH, input: "" }, "'input'"],
    ["input a number", { ...SPEECH, input: 42 }, "'input'"],
    ["4097-character input", { ...SPEECH, input: "a".repeat(4097) }, "4096"],
    ["4097 emoji (one character each)", { ...SPEECH, input: "😀".repeat(4097) }, "4096"],
    ["voice 7 (neither a name nor a custom voice)", { ...SPEECH, voice: 7 }, "'voice'"],
    ["voice {} (a custom voice without its id)", { ...SPEECH, voice: {} }, "'voice"],
    ["voice \"\"", { ...SPEECH, voice: "" }, "'voice'"],
    ["response_format ogg", { ...SPEECH, response_format: "ogg" }, "'response_format'"],
    ["speed 0.24", { ...SPEECH, speed: 0.24 }, "'speed'"],
    ["speed 4.01", { ...SPEECH, speed: 4.01 }, "'speed'"],
    ["speed \"fast\"", { ...SPEECH, speed: "fast" }, "'speed'"],
    ["stream_format x (neither audio nor sse)", { ...SPEECH, stream_format: "x" }, "'stream_format'"],
    ["a transcription model (wrong mode)", { ...SPEECH, model: "demo-transcribe" }, "demo-transcribe"],
  ];
  for (const [label, body, mentions] of cases) test(`${label} → 400`, () => refused("/v1/audio/speech", body, mentions));

  const accepted: [string, string][] = [
    ["4096 ASCII characters", "a".repeat(4096)],
    ["4096 two-byte characters (é)", "é".repeat(4096)],
    ["4096 emoji (two UTF-16 units, four UTF-8 bytes each)", "😀".repeat(4096)],
  ];
  for (const [label, input] of accepted) {
    test(`${label} → 200 audio`, async () => {
      const response = await post("/v1/audio/speech", { ...SPEECH, input }, okKey);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("audio/mpeg");
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
    });
  }

  test("speed at the bounds 0.25 and 4 is accepted", async () => {
    for (const speed of [0.25, 4]) expect((await post("/v1/audio/speech", { ...SPEECH, speed }, okKey)).status).toBe(200);
  });
});

/** One well-formed request per media endpoint (transcriptions and translations as multipart). */
function mediaRequests(key: string): [string, () => Promise<Response>][] {
  const json = (path: string, body: unknown) => () => gw.fetch(path, { method: "POST", headers: bearer(key), body: JSON.stringify(body) });
  const upload = (path: string) => () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(64)], { type: "audio/wav" }), "a.wav");
    return gw.fetch(path, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  };
  return [
    ["/v1/embeddings", json("/v1/embeddings", EMBED)],
    ["/v1/rerank", json("/v1/rerank", RERANK)],
    ["/v1/images/generations", json("/v1/images/generations", IMAGE)],
    ["/v1/audio/speech", json("/v1/audio/speech", SPEECH)],
    ["/v1/audio/transcriptions", upload("/v1/audio/transcriptions")],
    ["/v1/audio/translations", upload("/v1/audio/translations")],
  ];
}

describe("keys and permissions", () => {
  const permissionOf: Record<string, string> = {
    "/v1/embeddings": "embeddings",
    "/v1/rerank": "rerank",
    "/v1/images/generations": "images",
    "/v1/audio/speech": "audio",
    "/v1/audio/transcriptions": "audio",
    "/v1/audio/translations": "audio",
  };

  test("a key with only the 'chat' permission gets 403 permission_error naming the missing one on every media endpoint", async () => {
    for (const [path, send] of mediaRequests(chatOnlyKey)) {
      const message = await expectError(await send(), 403, "permission_error");
      expect({ path, message }).toEqual({ path, message: expect.stringContaining(`'${permissionOf[path]}'`) });
    }
    await expectNothingWritten();
  });

  test("an unknown key gets 401 authentication_error on every media endpoint", async () => {
    for (const [, send] of mediaRequests("sk-not-a-real-key-0123456789abcdef")) await expectError(await send(), 401, "authentication_error");
  });

  test("no key at all gets 401 on every media endpoint", async () => {
    for (const [path] of mediaRequests("")) {
      await expectError(await gw.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), 401, "authentication_error");
    }
  });

  test("the books of the whole gateway balance and no hold is open", async () => {
    const report = await checkLedger(gw.database.db);
    expect(report.problems).toEqual([]);
    expect(report.openHolds).toBe(0);
  });
});
