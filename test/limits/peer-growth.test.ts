import { expect, test } from "bun:test";
import { peerGrowth, type PeerRow } from "../../src/limits/peer-growth.ts";

/** The debit each instance takes from the others' rows of rate_usage (src/limits/peer-growth.ts). */

const row = (instance: string, bucket: string, requests: number, tokens: number): PeerRow => ({
  instance_id: instance,
  bucket,
  requests,
  tokens,
  requests_per_minute: 10,
  tokens_per_minute: 1000,
});

const usage = (bucket: string, requests: number, tokens: number) => ({ bucket, requests, tokens, requestsPerMinute: 10, tokensPerMinute: 1000 });

test("the first read after a start (nothing seen) only notes the totals: they may be hours old", () => {
  const { growth, seen } = peerGrowth(null, [row("inst_b", "user:1", 500, 40_000)]);
  expect(growth).toEqual([]);
  expect(seen.size).toBe(1);
});

test("a row read before is charged with what it grew since; one that did not grow is not charged", () => {
  const first = peerGrowth(null, [row("inst_b", "user:1", 5, 300), row("inst_b", "user:2", 1, 10)]);
  const { growth } = peerGrowth(first.seen, [row("inst_b", "user:1", 8, 450), row("inst_b", "user:2", 1, 10)]);
  expect(growth).toEqual([usage("user:1", 3, 150)]);
});

test("a row not seen at the last read was made since: all of it is charged, with the limits it carries", () => {
  const first = peerGrowth(null, []);
  const { growth } = peerGrowth(first.seen, [{ ...row("inst_b", "key:7", 10, 900), requests_per_minute: 20, tokens_per_minute: 0 }]);
  expect(growth).toEqual([{ bucket: "key:7", requests: 10, tokens: 900, requestsPerMinute: 20, tokensPerMinute: 0 }]);
});

test("a row whose request count went down was made again (its instance was taken for dead): all of it is new", () => {
  const first = peerGrowth(null, [row("inst_b", "user:1", 50, 5000)]);
  const { growth } = peerGrowth(first.seen, [row("inst_b", "user:1", 2, 100)]);
  expect(growth).toEqual([usage("user:1", 2, 100)]);
});

test("tokens settled below their reservation come back as a credit", () => {
  const first = peerGrowth(null, [row("inst_b", "user:1", 3, 900)]);
  const { growth } = peerGrowth(first.seen, [row("inst_b", "user:1", 3, 420)]);
  expect(growth).toEqual([usage("user:1", 0, -480)]);
});

test("each instance's row of one bucket is charged on its own; a row that went away is forgotten", () => {
  const first = peerGrowth(null, [row("inst_b", "user:1", 1, 10), row("inst_c", "user:1", 1, 10), row("inst_d", "user:1", 4, 40)]);
  const second = peerGrowth(first.seen, [row("inst_b", "user:1", 3, 30), row("inst_c", "user:1", 2, 20)]);
  expect(second.growth).toEqual([usage("user:1", 2, 20), usage("user:1", 1, 10)]);
  expect([...second.seen.keys()]).toHaveLength(2);
  // inst_d's row, pruned, comes back with a fresh total: charged in full, not as a drop from 4.
  const third = peerGrowth(second.seen, [row("inst_b", "user:1", 3, 30), row("inst_c", "user:1", 2, 20), row("inst_d", "user:1", 1, 10)]);
  expect(third.growth).toEqual([usage("user:1", 1, 10)]);
});
