import type { WriteTurn } from "../db/write-turn.ts";

/**
 * Runs `sweep` (a DELETE of at most `batch` expired rows, bound to the time now) one write job
 * at a time until a job deletes fewer than `batch`: a sweep after a busy hour takes several
 * turns, not one long one. Resolves with how many rows went.
 */
export async function sweepExpired(turn: WriteTurn, sweep: string, batch: number, now: () => number): Promise<number> {
  let swept = 0;
  for (let deleted = batch; deleted === batch; swept += deleted) {
    await turn.run((sql) => {
      deleted = sql.run(sweep, [now()]);
    });
  }
  return swept;
}
