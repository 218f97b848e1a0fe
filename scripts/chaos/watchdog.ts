import { killAllSpawned } from "../../test/billing/_support.ts";

/**
 * Makes a long-running script stop by itself: after `limitMs` (a run that hung) and on Ctrl-C it
 * kills every gateway process it spawned and exits (2 and 130). Returns what disarms the limit
 * once the run has ended on its own.
 */
export function stopSpawnedOnOverrun(name: string, limitMs: number): () => void {
  const watchdog = setTimeout(async () => {
    console.log(`${name}: the watchdog stopped the run`);
    await killAllSpawned();
    process.exit(2);
  }, limitMs);
  process.on("SIGINT", async () => {
    await killAllSpawned();
    process.exit(130);
  });
  return () => clearTimeout(watchdog);
}
