/**
 * Loaded into a gateway process before its entry (Bun and Deno `--preload`, Node `--import` of
 * its bundle) by scripts/stream-memory.ts, never by the gateway itself: on SIGUSR2 it runs a
 * full collection and appends one JSON line to $MEMPROBE_FILE with the process's RSS, the JS
 * heap, live objects by type (Bun) and active handles (Node, Deno); with $MEMPROBE_SNAPSHOTS
 * set, it also writes a heap snapshot into that folder, to diff two of them.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { runInNewContext } from "node:vm";

declare const Deno: { memoryUsage(): { rss: number; heapTotal: number; heapUsed: number; external: number } } | undefined;

const MB = 1024 * 1024;
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;
const file = process.env.MEMPROBE_FILE;
const snapshots = process.env.MEMPROBE_SNAPSHOTS;
const isBun = typeof Bun !== "undefined";
const isDeno = typeof Deno !== "undefined";
// Under Bun the module name is a variable so that Node's bundle and Deno never resolve it.
const jsc: typeof import("bun:jsc") | null = isBun ? await import(["bun", "jsc"].join(":")) : null;
const v8Collect = isBun ? null : (setFlagsFromString("--expose-gc"), runInNewContext("gc") as () => void);

/** What a line holds; the heap figures in MB. */
function read(): Record<string, unknown> {
  if (jsc) {
    const stats = jsc.heapStats();
    const usage = process.memoryUsage();
    return {
      rss: mb(usage.rss),
      heapSize: mb(stats.heapSize),
      heapCapacity: mb(stats.heapCapacity),
      extraMemory: mb(stats.extraMemorySize),
      objects: stats.objectCount,
      protectedObjects: stats.protectedObjectCount,
      types: stats.objectTypeCounts,
      protectedTypes: stats.protectedObjectTypeCounts,
    };
  }
  const heap = getHeapStatistics();
  const usage = isDeno ? Deno!.memoryUsage() : process.memoryUsage();
  const resources = typeof process.getActiveResourcesInfo === "function" ? process.getActiveResourcesInfo() : [];
  const counts: Record<string, number> = {};
  for (const name of resources) counts[name] = (counts[name] ?? 0) + 1;
  return {
    rss: mb(usage.rss),
    heapUsed: mb(usage.heapUsed),
    heapTotal: mb(usage.heapTotal),
    external: mb(usage.external),
    mallocedMemory: mb(heap.malloced_memory),
    peakMallocedMemory: mb(heap.peak_malloced_memory),
    contexts: heap.number_of_native_contexts,
    resources: counts,
    spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: mb(s.space_size), used: mb(s.space_used_size) }])),
  };
}

let taken = 0;
process.on("SIGUSR2", () => {
  if (jsc) jsc.fullGC();
  else v8Collect!();
  taken += 1;
  const line: Record<string, unknown> = { probe: taken, ...read() };
  if (snapshots) {
    const path = join(snapshots, `${taken}.heapsnapshot`);
    if (isBun) writeFileSync(path, Bun.generateHeapSnapshot("v8"));
    else writeHeapSnapshot(path);
    line.snapshot = path;
  }
  if (file) appendFileSync(file, JSON.stringify(line) + "\n");
});
