import { afterEach, beforeEach, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import type { OpenDatabase } from "../../src/db/open-database.ts";
import { WriteTurn } from "../../src/db/write-turn.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { KEEP_RESPONSES_MS, KeptResponses, type KeptResponse } from "../../src/state/kept-responses.ts";
import { functionCallItem, messageItem, outputText, type OutputItem } from "../../src/translate/openai-responses/convert-response.ts";
import { openTempDatabase, type TempDatabase } from "../helpers/temp-database.ts";

/**
 * How Responses are kept, for whom, for how long and within what bound, and how a chain of
 * them is found: against a real migrated database file, as every instance sharing it sees it.
 */

let temp: TempDatabase;
let database: OpenDatabase;
let now = 0;

beforeEach(async () => {
  now = 1_000_000;
  temp = await openTempDatabase("gateway-kept-responses-", () => now);
  database = temp.database;
});

afterEach(() => temp.remove());

/** A store on the test's database, as an instance keeps it, within `maxChars` (by default the configured default). */
const store = (maxChars = loadConfig({}).keptResponsesMaxChars) => new KeptResponses(new WriteTurn(database.db, database.sql), database.sql, () => now, silentLogger, maxChars);

const said = (id: string, text: string) => messageItem(id, [outputText(text)], "completed");
const asked = (text: string) => ({ role: "user" as const, content: text });

/** A kept Response `id` that answered `question` with `output`, continuing `previousId`. */
function response(id: string, output: OutputItem[], question = "Hi", previousId?: string): KeptResponse {
  return { response: { id, output }, input: [asked(question)], previousId };
}

/** What keeping `kept` counts against the bound: the bytes of its JSON text. */
const sizeOf = (kept: KeptResponse) => JSON.stringify(kept).length;

const rowsOf = (table: "kept_responses" | "kept_response_items") => database.sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`, [])!.n;
const totalBytes = () => database.sql.get<{ bytes: number }>("SELECT bytes FROM kept_responses_total", [])!.bytes;

test("a Response and its items are found by their owner for an hour, then not; never by another owner", async () => {
  const kept = store();
  const call = functionCallItem("fc_1", { callId: "call_1", name: "weather", arguments: "{}" }, "completed");
  const first = response("resp_1", [said("msg_1", "Hello"), call]);
  await kept.keep("user-a", first);
  expect(kept.recall("user-a", "resp_1")).toEqual(first);
  expect(kept.recallItem("user-a", "msg_1")).toEqual(said("msg_1", "Hello"));
  expect(kept.recallItem("user-a", "fc_1")).toEqual(call);
  expect(kept.recall("user-b", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-b", "msg_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_2")).toBeUndefined();
  now += KEEP_RESPONSES_MS - 1;
  expect(kept.recall("user-a", "resp_1")).toBeDefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeDefined();
  now += 1;
  expect(kept.recall("user-a", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeUndefined();
});

test("another store on the same database, as another instance, finds what one kept and sees what it forgot", async () => {
  const [one, other] = [store(), store()];
  await one.keep("user-a", response("resp_1", [said("msg_1", "Hello")]));
  expect(other.recall("user-a", "resp_1")).toEqual(response("resp_1", [said("msg_1", "Hello")]));
  expect(other.recallItem("user-a", "msg_1")).toEqual(said("msg_1", "Hello"));
  expect(await other.forget("user-a", "resp_1")).toBe(true);
  expect(one.recall("user-a", "resp_1")).toBeUndefined();
  expect(one.recallItem("user-a", "msg_1")).toBeUndefined();
});

test("a chain is its Responses oldest first, or the first link not kept for the owner", async () => {
  const kept = store();
  const first = response("resp_1", [said("msg_1", "one")], "a");
  await kept.keep("user-a", first);
  now += 1_000;
  const second = response("resp_2", [said("msg_2", "two")], "b", "resp_1");
  const third = response("resp_3", [said("msg_3", "three")], "c", "resp_2");
  await Promise.all([kept.keep("user-a", second), kept.keep("user-a", third)]);
  expect(kept.chain("user-a", "resp_3")).toEqual({ links: [first, second, third] });
  expect(kept.chain("user-a", "resp_1")).toEqual({ links: [first] });
  expect(kept.chain("user-b", "resp_3")).toEqual({ missing: "resp_3" });
  expect(kept.chain("user-a", "resp_9")).toEqual({ missing: "resp_9" });
  // The first expires first, and breaks the chain there.
  now += KEEP_RESPONSES_MS - 1_000;
  expect(kept.chain("user-a", "resp_3")).toEqual({ missing: "resp_1" });
});

test("a chain that loops, which ids made by the gateway never do, ends at the first link met again", async () => {
  const kept = store();
  await kept.keep("user-a", response("resp_1", [], "a", "resp_2"));
  await kept.keep("user-a", response("resp_2", [], "b", "resp_1"));
  expect(kept.chain("user-a", "resp_2")).toEqual({ missing: "resp_2" });
});

test("a forgotten Response is gone with its items; another owner cannot forget it", async () => {
  const kept = store();
  await kept.keep("user-a", response("resp_1", [said("msg_1", "Hello")]));
  expect(await kept.forget("user-b", "resp_1")).toBe(false);
  expect(kept.recall("user-a", "resp_1")).toBeDefined();
  expect(await kept.forget("user-a", "resp_1")).toBe(true);
  expect(kept.recall("user-a", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeUndefined();
  expect(await kept.forget("user-a", "resp_1")).toBe(false);
  expect([rowsOf("kept_responses"), rowsOf("kept_response_items"), totalBytes()]).toEqual([0, 0, 0]);
});

test("past the bound on their text, input and output alike, the oldest Responses go first", async () => {
  const oldest = response("resp_1", [said("msg_1", "x".repeat(300))]);
  // Its output is short, its input long: the input counts.
  const second = response("resp_2", [said("msg_2", "y")], "q".repeat(300), "resp_1");
  const kept = store(sizeOf(oldest) + sizeOf(second));
  await kept.keep("user-a", oldest);
  now += 1;
  await kept.keep("user-a", second);
  expect(kept.chain("user-a", "resp_2")).toEqual({ links: [oldest, second] });
  now += 1;
  await kept.keep("user-a", response("resp_3", [said("msg_3", "z".repeat(300))]));
  expect(kept.recall("user-a", "resp_1")).toBeUndefined();
  expect(kept.recallItem("user-a", "msg_1")).toBeUndefined();
  expect(kept.chain("user-a", "resp_2")).toEqual({ missing: "resp_1" });
  expect(kept.recall("user-a", "resp_3")).toBeDefined();
  now += 1;
  await kept.keep("user-a", response("resp_4", [said("msg_4", "w")], "q".repeat(300)));
  expect(kept.recall("user-a", "resp_2")).toBeUndefined();
  expect(kept.recall("user-a", "resp_3")).toBeDefined();
});

test("a forgotten Response frees its room at once, and the oldest of the others still go first", async () => {
  const made = (n: number) => response(`resp_${n}`, [said(`msg_${n}`, "x".repeat(400))]);
  const kept = store(3 * sizeOf(made(1)));
  for (const n of [1, 2, 3]) {
    await kept.keep("user-a", made(n));
    now += 1;
  }
  await kept.forget("user-a", "resp_2");
  await kept.keep("user-a", made(4));
  now += 1;
  expect(["resp_1", "resp_3", "resp_4"].map((id) => kept.recall("user-a", id) !== undefined)).toEqual([true, true, true]);
  await kept.keep("user-a", made(5));
  expect(["resp_1", "resp_3", "resp_4", "resp_5"].map((id) => kept.recall("user-a", id) !== undefined)).toEqual([false, true, true, true]);
});

test("the sweep deletes the expired Responses with their items, and their room, and leaves the rest", async () => {
  const kept = store();
  await kept.keep("user-a", response("resp_1", [said("msg_1", "one")]));
  now += 1_000;
  const later = response("resp_2", [said("msg_2", "two")]);
  await kept.keep("user-a", later);
  now += KEEP_RESPONSES_MS - 1_000;
  expect(await kept.sweep()).toBe(1);
  expect([rowsOf("kept_responses"), rowsOf("kept_response_items"), totalBytes()]).toEqual([1, 1, sizeOf(later)]);
  expect(kept.recallItem("user-a", "msg_2")).toEqual(said("msg_2", "two"));
});

test("a sweep of more expired Responses than one write job takes deletes them all, a batch a turn", async () => {
  const kept = store();
  await Promise.all(Array.from({ length: 1_203 }, (_, i) => kept.keep("user-a", response(`resp_${i}`, [said(`msg_${i}`, "old")]))));
  now += KEEP_RESPONSES_MS;
  await kept.keep("user-a", response("resp_live", [said("msg_live", "new")]));
  expect(await kept.sweep()).toBe(1_203);
  expect([rowsOf("kept_responses"), rowsOf("kept_response_items")]).toEqual([1, 1]);
  expect(kept.recall("user-a", "resp_live")).toBeDefined();
});
