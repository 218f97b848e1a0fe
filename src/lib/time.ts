/** ISO 8601 UTC text for a Unix-millisecond time. */
export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/** ISO text for an optional time; null stays null. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : isoOf(ms);
}
