import { expect, test } from "bun:test";
import { nestsDeeperThan } from "../../src/lib/json-depth.ts";

test("counts objects and arrays, mixed", () => {
  expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
  expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 4)).toBe(false);
  expect(nestsDeeperThan("[[],[],[]]", 1)).toBe(true);
  expect(nestsDeeperThan("[[],[],[]]", 2)).toBe(false);
});

test("brackets in strings do not count, whatever the escapes before the closing quote", () => {
  for (const inner of ["[[[", '\\"[[[', "\\\\", '\\\\\\"[[[', "{\\\\"]) {
    const text = `{"s":"${inner}","t":[1]}`;
    expect({ inner, parsed: typeof JSON.parse(text), deep: nestsDeeperThan(text, 2) }).toEqual({ inner, parsed: "object", deep: false });
    expect(nestsDeeperThan(text, 1)).toBe(true);
  }
});

test("text that is not JSON ends the scan (an unterminated string)", () => {
  expect(nestsDeeperThan('[[["abc', 5)).toBe(false);
  expect(nestsDeeperThan('[[["abc\\"', 2)).toBe(true);
});
