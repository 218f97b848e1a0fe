/**
 * Worker entry: checkpoints a local database's WAL on a connection of its own, every
 * `everyMs`. SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold,
 * on the event loop, and with synchronous=NORMAL it fsyncs twice: 1-6 ms for the request
 * that happened to commit then, the p99 at concurrency 1. Here those fsyncs block nobody.
 * A PASSIVE checkpoint takes no lock that a writer or reader waits for and never calls the
 * busy handler, so the gateway's commits go on while it runs.
 */
import LibsqlDatabase from "libsql";
import type { CheckpointerMessage, CheckpointerReport } from "./checkpointer-messages.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent<CheckpointerMessage>) => void) | null;
  postMessage(report: CheckpointerReport): void;
  close(): void;
}

type Connection = InstanceType<typeof LibsqlDatabase>;
type Statement = ReturnType<Connection["prepare"]>;

const scope = globalThis as unknown as WorkerScope;
let database: Connection | null = null;
let timer: ReturnType<typeof setInterval> | undefined;

function stop(): void {
  clearInterval(timer);
  database?.close();
  database = null;
  scope.close();
}

function checkpoint(statement: Statement): void {
  try {
    const row = statement.get([]) as { busy: number; log: number; checkpointed: number };
    scope.postMessage({ type: "checkpointed", busy: row.busy === 1, frames: row.log, copied: row.checkpointed });
  } catch (error) {
    scope.postMessage({ type: "failed", reason: error instanceof Error ? error.message : String(error) });
    stop();
  }
}

scope.onmessage = (event) => {
  const message = event.data;
  if (message.type === "stop") return stop();
  try {
    database = new LibsqlDatabase(message.path);
    const statement = database.prepare("PRAGMA wal_checkpoint(PASSIVE)");
    timer = setInterval(() => checkpoint(statement), message.everyMs);
    scope.postMessage({ type: "ready" });
  } catch (error) {
    scope.postMessage({ type: "failed", reason: error instanceof Error ? error.message : String(error) });
    stop();
  }
};
