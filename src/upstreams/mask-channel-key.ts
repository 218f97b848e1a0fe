/** What stands in a caller's text for a secret taken out. */
const MASK = "****";

/**
 * A word with a run of asterisks in it: a key its provider masked only in part, as OpenAI's
 * 401 does ("Incorrect API key provided: sk-abc12***...***wxyz"), showing its first and last
 * characters. It stops at quotes and backslashes so that, inside JSON text, it stays within
 * one string.
 */
const PARTLY_MASKED = /[^\s"\\]*\*{3,}[^\s"\\]*/g;

/**
 * An upstream's error text as a caller may see it: the channel's key, sent whole or quoted in
 * part, replaced by ****. Callers hold their own keys, never the channel's, and any piece of
 * it narrows the guess at the rest.
 */
export function maskChannelKey(text: string, channelKey: string | null): string {
  return withoutChannelKey(text, channelKey).replace(PARTLY_MASKED, MASK);
}

/**
 * Keys shorter than this are placeholders, not secrets (a local server's "EMPTY" or "x"), and
 * replacing them would cut into ordinary words, or into the JSON of an event relayed as it came.
 */
const MIN_MASKED_KEY_LENGTH = 8;

/**
 * `text` with the channel's key, quoted whole, replaced by ****: for text that is not an
 * error message (an event relayed as it came), where a run of asterisks may be the model's.
 */
export function withoutChannelKey(text: string, channelKey: string | null): string {
  return channelKey && channelKey.length >= MIN_MASKED_KEY_LENGTH ? text.replaceAll(channelKey, MASK) : text;
}
