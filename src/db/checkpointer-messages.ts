/** What the gateway tells its checkpoint worker (checkpoint-worker.ts). */
export type CheckpointerMessage = { type: "start"; path: string; everyMs: number } | { type: "stop" };

/** What the checkpoint worker reports: it is running, a checkpoint's outcome, or that it stopped on an error. */
export type CheckpointerReport =
  | { type: "ready" }
  | { type: "checkpointed"; busy: boolean; frames: number; copied: number }
  | { type: "failed"; reason: string };
