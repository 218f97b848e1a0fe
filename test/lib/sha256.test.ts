import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../src/lib/sha256.ts";

test("the FIPS 180-4 examples", () => {
  expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

test("agrees with node:crypto on every length across the block and padding boundaries, and on non-ASCII", () => {
  for (let length = 0; length <= 200; length++) {
    const text = "sk-gw-" + "x".repeat(length);
    expect(sha256Hex(text)).toBe(createHash("sha256").update(text).digest("hex"));
  }
  for (const text of ["é", "日本語のキー", "😀".repeat(40)]) expect(sha256Hex(text)).toBe(createHash("sha256").update(text).digest("hex"));
});
