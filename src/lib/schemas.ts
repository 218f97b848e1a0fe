import * as v from "valibot";

/** A model ID as callers send it. */
export const ModelIdSchema = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(200, "must be at most 200 characters"));

/** A string with at least one character. */
export const NonEmptyStringSchema = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"));
