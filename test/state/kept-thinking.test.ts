import { afterEach, beforeEach, expect, test } from "bun:test";
import type { SignedThinking } from "../../src/canonical/chat.ts";
import type { OpenDatabase } from "../../src/db/open-database.ts";
import { WriteTurn } from "../../src/db/write-turn.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { KEEP_THINKING_MS, KeptThinking, MAX_KEPT_THINKING_CHARS } from "../../src/state/kept-thinking.ts";
import { openTempDatabase, type TempDatabase } from "../helpers/temp-database.ts";

/**
 * How an answer's Anthropic thinking is kept for the turn that answers its tool calls: for
 * whom, for how long and how much, against a real migrated database file, as every instance
 * sharing it sees it.
 */

let temp: TempDatabase;
let database: OpenDatabase;
let now = 0;

beforeEach(async () => {
  now = 1_000_000;
  temp = await openTempDatabase("gateway-kept-thinking-", () => now);
  database = temp.database;
});

afterEach(() => temp.remove());

/** A store on the test's database, as one instance keeps it. */
const store = () => new KeptThinking(new WriteTurn(database.db, database.sql), database.sql, () => now, silentLogger);
/** What `kept` finds for `owner` under the one id `id`. */
const recallOne = (kept: KeptThinking, owner: string, id: string) => kept.recall(owner, [id]).get(id);
const rows = () => database.sql.get<{ n: number }>("SELECT count(*) AS n FROM kept_thinking", [])!.n;

const BLOCKS: SignedThinking[] = [
  { type: "thinking", thinking: "Call the weather tool.", signature: "EuYBsig" },
  { type: "redacted_thinking", data: "EmwKdata" },
];

test("kept blocks are found by their owner, from another instance too, for a day; never by another owner", async () => {
  await store().keep("user-a", "toolu_1", BLOCKS);
  const elsewhere = store();
  expect(recallOne(elsewhere, "user-a", "toolu_1")).toEqual(BLOCKS);
  expect(recallOne(elsewhere, "user-b", "toolu_1")).toBeUndefined();
  expect(recallOne(elsewhere, "user-a", "toolu_2")).toBeUndefined();
  now += KEEP_THINKING_MS - 1;
  expect(recallOne(elsewhere, "user-a", "toolu_1")).toEqual(BLOCKS);
  now += 1;
  expect(recallOne(elsewhere, "user-a", "toolu_1")).toBeUndefined();
});

test("two owners whose upstreams made the same call id each keep and find their own thinking", async () => {
  const other: SignedThinking[] = [{ type: "thinking", thinking: "Look up Lyon.", signature: "EqQBother" }];
  await store().keep("user-a", "toolu_1", BLOCKS);
  await store().keep("user-b", "toolu_1", other);
  expect(recallOne(store(), "user-a", "toolu_1")).toEqual(BLOCKS);
  expect(recallOne(store(), "user-b", "toolu_1")).toEqual(other);
  expect(rows()).toBe(2);
});

test("one read finds the thinking kept under each of a tool loop's ids, and only under those", async () => {
  const kept = store();
  const later: SignedThinking[] = [{ type: "thinking", thinking: "Now Lyon.", signature: "EqQBsig" }];
  await kept.keep("user-a", "toolu_1", BLOCKS);
  await kept.keep("user-a", "toolu_3", later);
  await kept.keep("user-a", "toolu_4", later);
  await kept.keep("user-b", "toolu_2", later);
  expect([...kept.recall("user-a", ["toolu_1", "toolu_2", "toolu_3"])]).toEqual([
    ["toolu_1", BLOCKS],
    ["toolu_3", later],
  ]);
  expect(kept.recall("user-a", ["constructor"]).size).toBe(0);
});

test("the sweep deletes expired rows only, in batches until none is left", async () => {
  const kept = store();
  for (let i = 0; i < 1_200; i++) await kept.keep("user-a", `toolu_old_${i}`, BLOCKS);
  now += 1_000;
  await kept.keep("user-a", "toolu_new", BLOCKS);
  now += KEEP_THINKING_MS - 500;
  expect(await kept.sweep()).toBe(1_200);
  expect(rows()).toBe(1);
  expect(recallOne(kept, "user-a", "toolu_new")).toEqual(BLOCKS);
});

test("an answer whose thinking is longer than the bound is not kept", async () => {
  const long: SignedThinking[] = [{ type: "thinking", thinking: "x".repeat(MAX_KEPT_THINKING_CHARS), signature: "sig" }];
  await store().keep("user-a", "toolu_long", long);
  expect(rows()).toBe(0);
});

test("a read that fails (the table gone) is no thinking, not an error", async () => {
  await store().keep("user-a", "toolu_1", BLOCKS);
  database.sql.run("DROP TABLE kept_thinking", []);
  expect(recallOne(store(), "user-a", "toolu_1")).toBeUndefined();
});
