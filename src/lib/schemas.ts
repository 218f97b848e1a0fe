import * as v from "valibot";

/** The most tokens one request is believed to use; an upstream that reports more is not believed. */
export const MAX_REPORTED_TOKENS = 100_000_000;

/** A token count as an upstream reports it: a whole number from 0 to MAX_REPORTED_TOKENS. */
export const TokenCountSchema = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_REPORTED_TOKENS));

/**
 * An upstream's usage object, read as absent when any count in it is not believable (negative,
 * fractional, huge): the request is then billed on the gateway's estimate, so a broken or
 * hostile upstream can neither credit an account nor drain it.
 */
export function believableUsage<S extends v.GenericSchema>(schema: S) {
  return v.fallback(v.optional(v.nullable(schema)), undefined);
}

/**
 * An optional field that may also arrive as null, read as left out (undefined). Gemini's
 * proto3 JSON reads null as a field's default everywhere, and OpenAI takes null for a
 * field not given: the Python SDKs send `None` as null, and a message replayed with
 * `message.model_dump()` carries `tool_calls: None`. Only for fields where null can mean
 * nothing else; never inside a JSON value a caller owns (tool inputs, schemas).
 */
export function nullAsAbsent<S extends v.GenericSchema>(schema: S) {
  return v.pipe(v.nullish(schema), v.transform((value) => value ?? undefined));
}

// C0 controls and DEL. The database driver reads TEXT back only up to a NUL, so a price for
// "fzbase\u0000x" came back as "fzbase" and replaced that model's price; the others have no
// place in a name either (log lines, headers, terminals).
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** Refuses a string with a control character (U+0000 to U+001F, U+007F): for every ID and name the gateway stores. */
export const withoutControlCharacters = v.check<string, string>(
  (text) => !CONTROL_CHARACTER.test(text),
  "must not contain control characters (U+0000 to U+001F or U+007F)",
);

/** An ID a caller or an admin sends: a model, a user, a payment method. */
export const IdentifierSchema = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(200, "must be at most 200 characters"),
  withoutControlCharacters,
);

/** A model ID as callers send it. */
export const ModelIdSchema = IdentifierSchema;

/** A name an admin gives a channel or a token: trimmed, 1 to 100 characters. */
export const NameSchema = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty"),
  v.maxLength(100, "must be at most 100 characters"),
  withoutControlCharacters,
);

/** A string with at least one character. */
export const NonEmptyStringSchema = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"));

/**
 * A content block (or part) whose `type` is none of `modelled`: accepted as sent, for an
 * upstream of the caller's format. A block of a modelled type is checked by its own schema
 * only, so a malformed `text` block is still refused rather than taken for an unknown one.
 */
export function otherTypedObject(modelled: readonly string[]) {
  return v.looseObject({
    type: v.pipe(
      v.string("must be a string"),
      v.check((type) => !modelled.includes(type), "is not a type this gateway knows"),
    ),
  });
}

/**
 * `schema`, an object or a record, refusing an array: valibot takes an array for an object
 * keyed by its indexes, so `stream_options: [1, 2]` or `generationConfig: []` passed as an
 * empty object. Wraps the objects whose keys are all optional, and records; where a key is
 * required its absence already refuses an array.
 */
export function objectOnly<S extends v.GenericSchema>(schema: S) {
  return v.pipe(v.custom<v.InferInput<S>>((input) => !Array.isArray(input), "must be an object, not an array"), schema);
}

/**
 * Keys valibot's record() leaves out of its output without a word, as a guard against
 * prototype pollution: a map that names one would lose that entry silently.
 */
const KEYS_RECORDS_DROP = ["__proto__", "constructor", "prototype"];

/**
 * A record from `key` to `value` (an object, not an array) that refuses the keys record()
 * would drop, for the maps an admin configures (model aliases, plans): the entry is refused
 * with its name, not lost.
 */
export function recordOf<K extends v.GenericSchema<string, string>, V extends v.GenericSchema>(key: K, value: V, message?: string) {
  return objectOnly(
    v.pipe(
      v.custom<Record<string, unknown>>((input) => typeof input !== "object" || input === null || !KEYS_RECORDS_DROP.some((name) => Object.hasOwn(input, name)), `must not have a key named ${KEYS_RECORDS_DROP.join(", ")}`),
      v.record(key, value, message),
    ),
  );
}

/**
 * A JSON object of any shape a caller sends (a tool's input or parameters, metadata), not an
 * array, kept whole: record() would drop an argument named "constructor" or "prototype".
 */
export const JsonObjectSchema = objectOnly(
  v.custom<Record<string, unknown>>((input) => typeof input === "object" && input !== null, "must be a JSON object"),
);
