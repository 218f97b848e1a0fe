/**
 * Parameters an upstream could not honour, collected while translating a request. They are
 * reported to the caller in the `x-gateway-warnings` header instead of being dropped silently.
 */
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

  /** The header value, or undefined when there is nothing to report. */
  header(): string | undefined {
    return this.#items.length === 0 ? undefined : this.#items.join("; ");
  }
}
