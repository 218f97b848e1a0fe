import { expect, test } from "bun:test";
import { latestOf, PeerReads, type PeerRow } from "../../src/limits/peer-reads.ts";

/** What each instance takes from the others' rows of rate_usage (src/limits/peer-reads.ts). */

const AT = Date.parse("2026-11-21T10:00:00Z");
const FORGET_AFTER_MS = 60_000;

const row = (instance: string, bucket: string, requests: number, tokens: number, levels: [number | null, number | null] = [null, null], at = AT): PeerRow => ({
  instance_id: instance,
  bucket,
  requests,
  tokens,
  requests_per_minute: 10,
  tokens_per_minute: 1000,
  updated_at: at,
  requests_level: levels[0],
  tokens_level: levels[1],
});

const usage = (bucket: string, requests: number, tokens: number) => ({ bucket, requests, tokens, requestsPerMinute: 10, tokensPerMinute: 1000 });
const level = (bucket: string, requestsLevel: number, tokensLevel: number) => ({ bucket, requestsLevel, tokensLevel, at: AT, requestsPerMinute: 10, tokensPerMinute: 1000 });

test("a row never seen (first read after a start, or a new row) gives its level and no growth: its totals may be hours old, and the level includes them", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  const first = reads.take([row("inst_b", "user:1", 500, 40_000, [2, 150])], AT);
  expect(first.growth).toEqual([]);
  expect(first.levels).toEqual([level("user:1", 2, 150)]);
  const second = reads.take([{ ...row("inst_b", "key:7", 10, 900, [0, -20]), requests_per_minute: 20 }], AT);
  expect(second.growth).toEqual([]);
  expect(second.levels).toEqual([{ ...level("key:7", 0, -20), requestsPerMinute: 20 }]);
});

test("a row read before is charged with what it grew since, and gives its level too; one that did not grow is not charged", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  reads.take([row("inst_b", "user:1", 5, 300, [5, 700]), row("inst_b", "user:2", 1, 10, [9, 990])], AT);
  const { growth, levels } = reads.take([row("inst_b", "user:1", 8, 450, [2, 550]), row("inst_b", "user:2", 1, 10, [9, 990])], AT);
  expect(growth).toEqual([usage("user:1", 3, 150)]);
  expect(levels).toEqual([level("user:1", 2, 550), level("user:2", 9, 990)]);
});

test("a row whose request count went down was made again (its instance was taken for dead): it is new, known by its level only", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  reads.take([row("inst_b", "user:1", 50, 5000, [0, 0])], AT);
  const { growth, levels } = reads.take([row("inst_b", "user:1", 2, 100, [1, 400])], AT);
  expect(growth).toEqual([]);
  expect(levels).toEqual([level("user:1", 1, 400)]);
});

test("a row written before rows had levels gives none, and is charged its growth once seen", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  expect(reads.take([row("inst_b", "user:1", 3, 30)], AT).levels).toEqual([]);
  const { growth, levels } = reads.take([row("inst_b", "user:1", 4, 40)], AT);
  expect(growth).toEqual([usage("user:1", 1, 10)]);
  expect(levels).toEqual([]);
});

test("tokens settled below their reservation come back as a credit", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  reads.take([row("inst_b", "user:1", 3, 900)], AT);
  expect(reads.take([row("inst_b", "user:1", 3, 420)], AT).growth).toEqual([usage("user:1", 0, -480)]);
});

test("each instance's rows are read from just after the latest time a read found all of them up to; an instance never read, from the start", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  expect(reads.readFrom()).toEqual(new Map());
  const rows = [row("inst_b", "user:1", 1, 10, [9, 990], AT + 5), row("inst_b", "user:2", 1, 10, [9, 990], AT + 9), row("inst_c", "user:1", 1, 10, [9, 990], AT)];
  expect(latestOf(rows)).toEqual(new Map([["inst_b", AT + 9], ["inst_c", AT]]));
  reads.readUpTo(latestOf(rows), AT);
  expect(reads.readFrom()).toEqual(new Map([["inst_b", AT + 10], ["inst_c", AT + 1]]));
});

test("each instance's row of one bucket is charged on its own; a row not read again for a minute is forgotten, and new when it comes back", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  const first = [row("inst_b", "user:1", 1, 10), row("inst_c", "user:1", 1, 10), row("inst_d", "user:1", 4, 40)];
  reads.take(first, AT);
  reads.readUpTo(latestOf(first), AT);
  const second = [row("inst_b", "user:1", 3, 30), row("inst_c", "user:1", 2, 20)];
  expect(reads.take(second, AT + 30_000).growth).toEqual([usage("user:1", 2, 20), usage("user:1", 1, 10)]);
  reads.readUpTo(latestOf(second), AT + 30_000);
  // A minute after inst_d's row was last read (its writer has pruned it), it goes, with inst_d.
  reads.take([], AT + FORGET_AFTER_MS + 1);
  expect(reads.size).toBe(2);
  expect([...reads.readFrom().keys()]).toEqual(["inst_b", "inst_c"]);
  const back = reads.take([row("inst_d", "user:1", 6, 60, [9, 990])], AT + FORGET_AFTER_MS + 2);
  expect(back.growth).toEqual([]);
  expect(back.levels).toEqual([level("user:1", 9, 990)]);
});

test("clear forgets every row and instance: what is read next is all new", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  reads.take([row("inst_b", "user:1", 1, 10)], AT);
  reads.readUpTo(new Map([["inst_b", AT]]), AT);
  reads.clear();
  expect(reads.readFrom()).toEqual(new Map());
  expect(reads.take([row("inst_b", "user:1", 5, 50)], AT).growth).toEqual([]);
});
