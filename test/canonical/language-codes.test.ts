import { describe, expect, test } from "bun:test";
import { isIso6391, languageCode, languageName } from "../../src/canonical/language-codes.ts";

describe("language codes", () => {
  test("isIso6391 knows all 184 two-letter codes and nothing else", () => {
    const letters = "abcdefghijklmnopqrstuvwxyz";
    let count = 0;
    for (const first of letters) for (const second of letters) if (isIso6391(first + second)) count++;
    expect(count).toBe(184);
    expect(isIso6391("en")).toBe(true);
    expect(isIso6391("zh")).toBe(true);
    expect(isIso6391("xx")).toBe(false);
    expect(isIso6391("eng")).toBe(false);
    expect(isIso6391("")).toBe(false);
  });

  test("isIso6391 ignores case, as Whisper does", () => {
    expect(isIso6391("EN")).toBe(true);
    expect(isIso6391("Fr")).toBe(true);
  });

  test("languageName spells codes out as OpenAI reports them", () => {
    expect(languageName("en")).toBe("english");
    expect(languageName("DE")).toBe("german");
    expect(languageName("ht")).toBe("haitian creole");
    expect(languageName("aa")).toBe("aa");
    expect(languageName("constructor")).toBe("constructor");
  });

  test("languageCode reverses languageName", () => {
    expect(languageCode("english")).toBe("en");
    expect(languageCode("Chinese")).toBe("zh");
    expect(languageCode("klingon")).toBeUndefined();
    expect(languageCode("toString")).toBeUndefined();
  });
});
