type Task = () => void;

const immediate = (globalThis as { setImmediate?: (task: Task) => unknown }).setImmediate;

/**
 * Runs `task` on the next event-loop turn, after pending I/O callbacks: the point where
 * requests that arrived together have all queued their writes. setImmediate where the
 * runtime has it (Bun, Node, Deno); a 0 ms timer otherwise, which Bun clamps to about 1 ms.
 */
export const nextTurn: (task: Task) => void = immediate ? (task) => void immediate(task) : (task) => void setTimeout(task, 0);

/** Resolves on the next event-loop turn (see nextTurn): long work awaits it between slices, so other I/O runs. */
export function afterTurn(): Promise<void> {
  return new Promise((resolve) => nextTurn(resolve));
}
