/**
 * Parameters an upstream could not honour, collected while translating a request. They are
 * reported to the caller in the `x-gateway-warnings` header instead of being dropped silently.
 */
/** The longest x-gateway-warnings value sent. */
const MAX_HEADER_CHARACTERS = 4096;
const CUT_MARK = "; (more left out)";

export class UpstreamWarnings {
  #items: string[] = [];

  /** Notes that `field` was changed or ignored, and why. */
  add(field: string, message: string): void {
    this.#items.push(`${field}: ${message}`);
  }

  /** Notes a warning already written as `field: why`. */
  note(warning: string): void {
    this.#items.push(warning);
  }

  /** How many are noted: a mark for `forgetSince`. */
  get count(): number {
    return this.#items.length;
  }

  /** Forgets those noted after `count` were: a request translated again notes its own afresh. */
  forgetSince(count: number): void {
    this.#items.length = Math.min(count, this.#items.length);
  }

  /**
   * The header value, or undefined when there is nothing to report. Warnings name the
   * caller's own fields, so the value is made one a header can carry: characters outside
   * printable ASCII (a field named in Cyrillic, a CR or NUL, which the Headers of fetch
   * refuse) are written as \uXXXX, and it is cut at MAX_HEADER_CHARACTERS, since HTTP clients
   * refuse response heads past 8 to 16 KiB. Built after the upstream answered, a value that
   * could not be sent failed a request that was served and billed.
   */
  header(): string | undefined {
    if (this.#items.length === 0) return undefined;
    const value = this.#items.join("; ").replace(/[^\x20-\x7e]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
    return value.length <= MAX_HEADER_CHARACTERS ? value : `${value.slice(0, MAX_HEADER_CHARACTERS - CUT_MARK.length)}${CUT_MARK}`;
  }
}

/** Warnings that are not reported: what is noted here is dropped (see translationWarnings). */
class UnreportedWarnings extends UpstreamWarnings {
  override add(): void {}
  override note(): void {}
}

/** The one sink for warnings that are not reported; it holds nothing, so it serves every request. */
export const UNREPORTED_WARNINGS: UpstreamWarnings = new UnreportedWarnings();
