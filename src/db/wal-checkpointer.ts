import type { Logger } from "../lib/logger.ts";
import type { CheckpointerMessage, CheckpointerReport } from "./checkpointer-messages.ts";

/** How often the worker checkpoints: a busy gateway's WAL grows a few thousand frames in this time. */
export const CHECKPOINT_EVERY_MS = 500;
/** SQLite's own threshold, in WAL frames, for the automatic checkpoint the worker stands in for. */
export const AUTOMATIC_CHECKPOINT_PAGES = 1000;
/** How long the worker may take to open its connection before the gateway keeps checkpointing itself. */
const READY_WAIT_MS = 5_000;

/** The part of a Web Worker (Bun, Deno) that the checkpointer uses. */
export interface CheckpointWorker {
  postMessage(message: CheckpointerMessage): void;
  terminate(): void;
  onmessage: ((event: MessageEvent<CheckpointerReport>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
}

/** A running checkpointer: what it has done so far, and how to stop it. */
export interface WalCheckpointer {
  /** Checkpoints that copied frames into the database file. */
  readonly copies: number;
  /** Stops the worker; the gateway's connection checkpoints by itself again. */
  stop(): void;
}

/**
 * Moves WAL checkpoints off the event loop: a worker (checkpoint-worker.ts) checkpoints the
 * database at `path` on its own connection, and once it runs, the gateway's connection stops
 * checkpointing (`setAutomaticCheckpoint(0)`). Should the worker fail to start or stop on an
 * error, the automatic checkpoint comes back, so the WAL never grows without bound.
 * Resolves once the worker runs, or has been given up.
 */
export async function checkpointOffTheLoop(
  worker: CheckpointWorker,
  path: string,
  setAutomaticCheckpoint: (pages: number) => void,
  log: Logger,
): Promise<WalCheckpointer> {
  let copies = 0;
  let running = false;
  let givenUp = false;
  // A worker that reports its failure may also end with an error event: told once.
  const fallBack = (reason: string) => {
    if (givenUp) return;
    givenUp = true;
    if (running) setAutomaticCheckpoint(AUTOMATIC_CHECKPOINT_PAGES);
    running = false;
    worker.terminate();
    log.warn("WAL checkpoints are back on the event loop", { reason });
  };
  const ready = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      fallBack("the checkpoint worker did not start in time");
      resolve();
    }, READY_WAIT_MS);
    const settle = () => {
      clearTimeout(timer);
      resolve();
    };
    worker.onmessage = ({ data }) => {
      if (givenUp) return;
      if (data.type === "ready") {
        setAutomaticCheckpoint(0);
        running = true;
        settle();
      } else if (data.type === "checkpointed") {
        if (data.copied > 0) copies += 1;
      } else {
        fallBack(data.reason);
        settle();
      }
    };
    worker.onerror = (event) => {
      event.preventDefault?.();
      fallBack(event.message || "the checkpoint worker failed");
      settle();
    };
  });
  worker.postMessage({ type: "start", path, everyMs: CHECKPOINT_EVERY_MS });
  await ready;
  return {
    get copies() {
      return copies;
    },
    stop() {
      if (!running) return;
      running = false;
      givenUp = true;
      setAutomaticCheckpoint(AUTOMATIC_CHECKPOINT_PAGES);
      worker.postMessage({ type: "stop" });
    },
  };
}
