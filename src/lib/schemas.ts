import * as v from "valibot";

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
