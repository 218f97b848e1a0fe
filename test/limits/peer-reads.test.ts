import { expect, test } from "bun:test";
import { latestOf, PeerReads } from "../../src/limits/peer-reads.ts";

/** How far each instance has read the others' rows of rate_windows (src/limits/peer-reads.ts). */

const AT = Date.parse("2026-11-21T10:00:00Z");
const FORGET_AFTER_MS = 61_000;

const row = (instance: string, at: number) => ({ instance_id: instance, updated_at: at });

test("each instance's rows are read from just after the latest time a read found all of them up to; an instance never read, from the start", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  expect(reads.readFrom()).toEqual(new Map());
  const rows = [row("inst_b", AT + 5), row("inst_b", AT + 9), row("inst_c", AT)];
  expect(latestOf(rows)).toEqual(new Map([["inst_b", AT + 9], ["inst_c", AT]]));
  reads.readUpTo(latestOf(rows), AT);
  expect(reads.readFrom()).toEqual(new Map([["inst_b", AT + 10], ["inst_c", AT + 1]]));
});

test("an instance whose rows a read has not found for a minute is forgotten: its rows, if it writes again, are read from the start", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  reads.readUpTo(new Map([["inst_b", AT], ["inst_c", AT]]), AT);
  reads.readUpTo(new Map([["inst_b", AT + 30_000]]), AT + 30_000);
  reads.readUpTo(new Map(), AT + FORGET_AFTER_MS + 1);
  expect([...reads.readFrom().keys()]).toEqual(["inst_b"]);
  expect(reads.size).toBe(1);
});

test("clear forgets every instance: what is read next is all new", () => {
  const reads = new PeerReads(FORGET_AFTER_MS);
  reads.readUpTo(new Map([["inst_b", AT]]), AT);
  reads.clear();
  expect(reads.readFrom()).toEqual(new Map());
});
