import { expect, test } from "bun:test";
import { errorObjectStatus } from "../../src/translate/error-event-status.ts";

test("a numeric code is the status, when it is one of an error", () => {
  expect(errorObjectStatus({ message: "bad", type: "BadRequestError", code: 400 })).toBe(400);
  expect(errorObjectStatus({ code: 503, status: "UNAVAILABLE" })).toBe(503);
  // OpenAI's string codes, and numbers that are no error status, say nothing by themselves.
  expect(errorObjectStatus({ code: "context_length_exceeded" })).toBeUndefined();
  expect(errorObjectStatus({ code: 200 })).toBeUndefined();
});

test("Gemini's status names, and the error types of Anthropic and OpenAI", () => {
  expect(errorObjectStatus({ status: "INVALID_ARGUMENT" })).toBe(400);
  expect(errorObjectStatus({ status: "RESOURCE_EXHAUSTED" })).toBe(429);
  expect(errorObjectStatus({ type: "invalid_request_error", code: "context_length_exceeded" })).toBe(400);
  expect(errorObjectStatus({ type: "overloaded_error" })).toBe(529);
  expect(errorObjectStatus({ type: "request_too_large" })).toBe(413);
  expect(errorObjectStatus({ type: "server_error" })).toBe(500);
});

test("nothing for an unknown type, or what is not an error object", () => {
  expect(errorObjectStatus({ type: "something_new", message: "?" })).toBeUndefined();
  expect(errorObjectStatus({ type: "constructor", status: "toString" })).toBeUndefined();
  expect(errorObjectStatus("Overloaded")).toBeUndefined();
  expect(errorObjectStatus(null)).toBeUndefined();
  expect(errorObjectStatus(undefined)).toBeUndefined();
});
