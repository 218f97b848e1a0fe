const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether JSON `text` nests objects and arrays more than `limit` levels deep. One pass over
 * the text: brackets are counted outside strings, and each string is skipped with indexOf, so
 * the long strings that make up most large bodies (base64 images, documents) cost a native
 * scan. Text that is not JSON gives some answer and ends; the parser reports it.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = closingQuoteOf(text, i);
      if (i < 0) return false;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that ends the string opened at `open`, or -1 when none does. */
function closingQuoteOf(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote > 0 && isEscaped(text, quote)) quote = text.indexOf('"', quote + 1);
  return quote;
}

/** Whether the character at `index` follows an odd run of backslashes (`\"`, not `\\"`). */
function isEscaped(text: string, index: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(index - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}
