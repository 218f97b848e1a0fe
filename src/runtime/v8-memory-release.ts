import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { MemoryRelease } from "../lib/idle-reclaimer.ts";

/**
 * The idle memory release on V8 (Node, Deno): a full collection. Without one, V8 kept the
 * heap a soak had grown it to (about 58 MB, 20 at the start) and Node's RSS stayed 100 MB
 * above its start for as long as the gateway stood idle. V8 hands `gc` only to contexts made
 * after --expose-gc is set, so the gateway's own global object does not get one. JavaScript
 * cannot ask V8 to drop compiled code, so the stronger release is the same collection; the
 * heap's spare pages go back to the system as V8 shrinks it after the collections.
 * `trimAllocator`, where the runtime can call it, then hands the C allocator's free pages back.
 */
export function v8MemoryRelease(trimAllocator?: () => void): MemoryRelease {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const collect = trimAllocator
    ? () => {
        gc();
        trimAllocator();
      }
    : gc;
  return { collect, shrink: collect };
}
