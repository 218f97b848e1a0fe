import { describe, expect, test } from "bun:test";
import { DelimiterFinder } from "../../src/multipart/find-delimiter.ts";
import { randomCuts, utf8 } from "./_support.ts";

/** Reference answer by brute force: the input split at each (non-overlapping) occurrence of `needle`. */
function splitNaive(input: Uint8Array, needle: Uint8Array): number[][] {
  const pieces: number[][] = [];
  let current: number[] = [];
  for (let i = 0; i < input.length; ) {
    if (needle.every((b, k) => input[i + k] === b)) {
      pieces.push(current);
      current = [];
      i += needle.length;
    } else {
      current.push(input[i++]!);
    }
  }
  pieces.push(current);
  return pieces;
}

/** The same split done by DelimiterFinder over `input` cut into chunks of the given sizes. */
function splitStreaming(input: Uint8Array, needle: Uint8Array, cuts: readonly number[]): number[][] {
  const finder = new DelimiterFinder(needle);
  const pieces: number[][] = [];
  let current: number[] = [];
  let offset = 0;
  for (let turn = 0; offset < input.length; turn++) {
    const chunk = input.slice(offset, offset + cuts[turn % cuts.length]!);
    offset += chunk.length;
    for (let pos = 0; pos < chunk.length; ) {
      const { data, next, found } = finder.scan(chunk, pos);
      for (const bytes of data) current.push(...bytes);
      if (found) {
        pieces.push(current);
        current = [];
      }
      pos = next;
    }
  }
  // Whatever the finder still holds at the end is a partial match: it was data after all.
  const tail = finder.scan(new Uint8Array([0]), 0);
  for (const bytes of tail.data) current.push(...bytes);
  pieces.push(current.slice(0, -1));
  return pieces;
}

/** Random prefixes of the needle (the whole needle included) and stray bytes, run together. */
function trapInput(needle: Uint8Array, seed: number): Uint8Array {
  const stray = [13, 10, 45, 97, 98, 120];
  const bytes: number[] = [];
  for (const pick of randomCuts(seed, 60, needle.length + stray.length)) {
    if (pick <= needle.length) bytes.push(...needle.subarray(0, pick));
    else bytes.push(stray[pick - needle.length - 1]!);
  }
  return new Uint8Array(bytes);
}

describe("DelimiterFinder", () => {
  // A needle with internal repeats, so the KMP fallback keeps part of a failed match.
  for (const needle of [utf8("\r\n--ab"), utf8("\r\n\r\n\r\nx"), utf8("\r\r\r")]) {
    test(`agrees with a brute-force split for ${JSON.stringify(new TextDecoder().decode(needle))}`, () => {
      for (let seed = 1; seed <= 300; seed++) {
        const input = trapInput(needle, seed);
        const want = splitNaive(input, needle);
        for (const cuts of [[1], [2], [3], [200], randomCuts(seed + 1000, 50, 9)]) {
          expect(splitStreaming(input, needle, cuts)).toEqual(want);
        }
      }
    });
  }

  test("a partial match counted as already seen is dropped when it fails, kept when it completes", () => {
    const needle = utf8("\r\n--b");
    const direct = new DelimiterFinder(needle, 2).scan(utf8("--b rest"), 0);
    expect(direct).toMatchObject({ next: 3, found: true });
    const preamble = new DelimiterFinder(needle, 2).scan(utf8("junk\r\n--b"), 0);
    expect(preamble.found).toBe(true);
    expect(new TextDecoder().decode(Buffer.concat(preamble.data))).toBe("\r\njunk");
  });

  test("8 MB of CRLF-dash look-alikes in one-byte-short matches: no false match, every byte passed on as data", () => {
    const needle = utf8(`\r\n--${"z".repeat(60)}`);
    const unit = utf8(`\r\n--${"z".repeat(59)}!`);
    const input = new Uint8Array(8 * 1024 * 1024);
    for (let i = 0; i + unit.length <= input.length; i += unit.length) input.set(unit, i);
    const finder = new DelimiterFinder(needle);
    let seen = 0;
    for (let offset = 0; offset < input.length; offset += 4096) {
      const { data, found } = finder.scan(input.subarray(offset, offset + 4096), 0);
      expect(found).toBe(false);
      for (const bytes of data) seen += bytes.length;
    }
    expect(seen).toBe(input.length);
  });
});
