import { expect, test } from "bun:test";
import { peerCharges, type PeerRow } from "../../src/limits/peer-charges.ts";

/** What each instance takes from the others' rows of rate_usage (src/limits/peer-charges.ts). */

const AT = Date.parse("2026-11-21T10:00:00Z");

const row = (instance: string, bucket: string, requests: number, tokens: number, levels: [number | null, number | null] = [null, null]): PeerRow => ({
  instance_id: instance,
  bucket,
  requests,
  tokens,
  requests_per_minute: 10,
  tokens_per_minute: 1000,
  updated_at: AT,
  requests_level: levels[0],
  tokens_level: levels[1],
});

const usage = (bucket: string, requests: number, tokens: number) => ({ bucket, requests, tokens, requestsPerMinute: 10, tokensPerMinute: 1000 });
const level = (bucket: string, requestsLevel: number, tokensLevel: number) => ({ bucket, requestsLevel, tokensLevel, at: AT, requestsPerMinute: 10, tokensPerMinute: 1000 });

test("a row never seen (first read after a start, or a new row) gives its level and no growth: its totals may be hours old, and the level includes them", () => {
  const first = peerCharges(new Map(), [row("inst_b", "user:1", 500, 40_000, [2, 150])]);
  expect(first.growth).toEqual([]);
  expect(first.levels).toEqual([level("user:1", 2, 150)]);
  expect(first.seen.size).toBe(1);
  const second = peerCharges(first.seen, [row("inst_b", "user:1", 500, 40_000, [2, 150]), { ...row("inst_b", "key:7", 10, 900, [0, -20]), requests_per_minute: 20 }]);
  expect(second.growth).toEqual([]);
  expect(second.levels).toEqual([level("user:1", 2, 150), { ...level("key:7", 0, -20), requestsPerMinute: 20 }]);
});

test("a row read before is charged with what it grew since, and gives its level too; one that did not grow is not charged", () => {
  const first = peerCharges(new Map(), [row("inst_b", "user:1", 5, 300, [5, 700]), row("inst_b", "user:2", 1, 10, [9, 990])]);
  const { growth, levels } = peerCharges(first.seen, [row("inst_b", "user:1", 8, 450, [2, 550]), row("inst_b", "user:2", 1, 10, [9, 990])]);
  expect(growth).toEqual([usage("user:1", 3, 150)]);
  expect(levels).toEqual([level("user:1", 2, 550), level("user:2", 9, 990)]);
});

test("a row whose request count went down was made again (its instance was taken for dead): it is new, known by its level only", () => {
  const first = peerCharges(new Map(), [row("inst_b", "user:1", 50, 5000, [0, 0])]);
  const { growth, levels } = peerCharges(first.seen, [row("inst_b", "user:1", 2, 100, [1, 400])]);
  expect(growth).toEqual([]);
  expect(levels).toEqual([level("user:1", 1, 400)]);
});

test("a row written before rows had levels gives none, and is charged its growth once seen", () => {
  const first = peerCharges(new Map(), [row("inst_b", "user:1", 3, 30)]);
  expect(first.levels).toEqual([]);
  const { growth, levels } = peerCharges(first.seen, [row("inst_b", "user:1", 4, 40)]);
  expect(growth).toEqual([usage("user:1", 1, 10)]);
  expect(levels).toEqual([]);
});

test("tokens settled below their reservation come back as a credit", () => {
  const first = peerCharges(new Map(), [row("inst_b", "user:1", 3, 900)]);
  const { growth } = peerCharges(first.seen, [row("inst_b", "user:1", 3, 420)]);
  expect(growth).toEqual([usage("user:1", 0, -480)]);
});

test("each instance's row of one bucket is charged on its own; a row that went away is forgotten", () => {
  const first = peerCharges(new Map(), [row("inst_b", "user:1", 1, 10), row("inst_c", "user:1", 1, 10), row("inst_d", "user:1", 4, 40)]);
  const second = peerCharges(first.seen, [row("inst_b", "user:1", 3, 30), row("inst_c", "user:1", 2, 20)]);
  expect(second.growth).toEqual([usage("user:1", 2, 20), usage("user:1", 1, 10)]);
  expect([...second.seen.keys()]).toHaveLength(2);
  // inst_d's row, pruned, comes back: new, so not charged as a drop from 4 nor in full.
  const third = peerCharges(second.seen, [row("inst_b", "user:1", 3, 30), row("inst_c", "user:1", 2, 20), row("inst_d", "user:1", 1, 10, [9, 990])]);
  expect(third.growth).toEqual([]);
  expect(third.levels).toEqual([level("user:1", 9, 990)]);
});
