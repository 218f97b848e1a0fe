import type { MadeImages } from "../../canonical/media.ts";

/** A field of a lenient answer, when it is a string. */
const stringOrUndefined = (value: unknown) => (typeof value === "string" ? value : undefined);

/**
 * What an OpenAI image answer, or a streamed image's completed event, says the model made: GPT
 * image models give the `size` and `quality` they chose, which the charge follows.
 */
export function madeImagesOf(answer: Readonly<Record<string, unknown>>): MadeImages {
  return { size: stringOrUndefined(answer.size), quality: stringOrUndefined(answer.quality) };
}
