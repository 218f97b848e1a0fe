import { expect, test } from "bun:test";
import { googleBase64ToStandard } from "../../src/lib/base64.ts";

/** Bytes whose standard base64 has both of the alphabets' differing characters, one byte past a quad. */
const BYTES = new Uint8Array([0xfb, 0xff, 0xbf, 0x01]);
const STANDARD = Buffer.from(BYTES).toString("base64");

test.each([
  ["standard, padded", STANDARD],
  ["standard, unpadded", STANDARD.replace(/=+$/, "")],
  ["URL-safe, padded", Buffer.from(BYTES).toString("base64url") + "=="],
  ["URL-safe, unpadded", Buffer.from(BYTES).toString("base64url")],
  ["whitespace anywhere, padding too", ` ${STANDARD.slice(0, 3)}\t${STANDARD.slice(3, 6)}\r\n=\f=\v`],
  ["'.' for padding, as Google's decoder takes it", STANDARD.replace(/=/g, ".")],
])("%s is the bytes' standard padded base64", (_, text) => {
  const standard = googleBase64ToStandard(text)!;
  expect(standard).toBe(STANDARD);
  expect(Buffer.from(standard, "base64")).toEqual(Buffer.from(BYTES));
});

test("whole quads and the empty string stand as they are", () => {
  expect(googleBase64ToStandard("QUJD")).toBe("QUJD");
  expect(googleBase64ToStandard("QUI")).toBe("QUI=");
  expect(googleBase64ToStandard("")).toBe("");
});

test.each([
  ["a character of neither alphabet", "QUJD!"],
  ["both alphabets", "+/_-AQ=="],
  ["a lone last character", "QUJDR"],
  ["padding short of its due", "QQ="],
  ["padding past its due", "QUJD="],
  ["padding alone", "===="],
  ["data after padding", "QQ==QQ=="],
  ["a data URL", `data:image/png;base64,${STANDARD}`],
])("%s is refused", (_, text) => {
  expect(googleBase64ToStandard(text)).toBeNull();
});
