import { expect, test } from "bun:test";
import { firstContentType, mediaTypeOf } from "../../src/upstreams/content-type.ts";

test("firstContentType keeps the first of a header sent twice, as sent", () => {
  expect(firstContentType("audio/mpeg, audio/wav")).toBe("audio/mpeg");
  expect(firstContentType("audio/ogg; codecs=opus")).toBe("audio/ogg; codecs=opus");
  expect(firstContentType(null)).toBeNull();
  expect(firstContentType(" , audio/wav")).toBeNull();
});

test("firstContentType does not split at a comma inside a quoted parameter", () => {
  expect(firstContentType('audio/ogg; codecs="opus,vorbis", audio/wav')).toBe('audio/ogg; codecs="opus,vorbis"');
  expect(firstContentType('text/plain; x="a\\",b", text/html')).toBe('text/plain; x="a\\",b"');
});

test("mediaTypeOf drops parameters and case", () => {
  expect(mediaTypeOf("Application/JSON ; charset=utf-8")).toBe("application/json");
  expect(mediaTypeOf("text/event-stream")).toBe("text/event-stream");
});
