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

/** A model ID as callers send it. */
export const ModelIdSchema = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(200, "must be at most 200 characters"));

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
