/** ISO 8601 UTC text for a Unix-millisecond time. */
export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/** ISO text for an optional time; null stays null. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : isoOf(ms);
}

/** Whether a `YYYY-MM-DD` date exists: some engines roll 2026-02-30 over to March 2 instead of refusing it. */
export function isRealDate(ymd: string): boolean {
  const [year, month, day] = ymd.split("-").map(Number) as [number, number, number];
  // setUTCFullYear, not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
