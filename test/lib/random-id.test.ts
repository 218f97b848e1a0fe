import { describe, expect, test } from "bun:test";
import { newId, randomBase62 } from "../../src/lib/random-id.ts";

describe("newId", () => {
  test("is the prefix, 8 clock characters and 12 random ones, all base62", () => {
    const id = newId("req");
    expect(id).toMatch(/^req_[0-9a-zA-Z]{20}$/);
  });

  test("sorts as text in creation-time order, across millisecond, digit and year boundaries", () => {
    const times = [0, 1, 61, 62, 3843, 3844, Date.UTC(2026, 10, 21), Date.UTC(2026, 10, 21) + 1, Date.UTC(2100, 0, 1), 62 ** 8 - 1];
    const ids = times.map((t) => newId("use", t));
    expect([...ids].sort()).toEqual(ids);
  });

  test("ids of the same millisecond differ in their random part", () => {
    const at = Date.UTC(2026, 10, 21);
    const ids = new Set(Array.from({ length: 10_000 }, () => newId("req", at)));
    expect(ids.size).toBe(10_000);
    for (const id of ids) expect(id.slice(0, 12)).toBe(newId("req", at).slice(0, 12));
  });
});

describe("randomBase62", () => {
  test("has the asked length and uses every character of the alphabet", () => {
    const text = randomBase62(20_000);
    expect(text).toHaveLength(20_000);
    expect(new Set(text).size).toBe(62);
  });
});
