/** What `settleWithin` gives when the wait ran out first. */
export const TIMED_OUT = Symbol("timed out");

/**
 * `pending`'s value, or TIMED_OUT when `ms` pass before it settles. Only the wait is cut
 * short: the caller then stops what `pending` waits on (cancels the upstream read), which is
 * how an idle timeout frees the connection. A later rejection of `pending` counts as handled.
 */
export async function settleWithin<T>(pending: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
