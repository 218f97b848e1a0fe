import { readFileSync } from "node:fs";

/** Resident kB of a process by mapping, from /proc/<pid>/smaps. */
export type MappingRss = Map<string, number>;

/** Anonymous mappings at least this large (virtual) are named by their address: arenas and heaps that stay put. */
const LARGE_ANON_BYTES = 64 * 1024 * 1024;

/**
 * Reads `pid`'s resident memory by mapping: a file's mappings under its path, [heap] and
 * [stack] as such, each large anonymous reservation (an allocator's arena, a JS heap) under
 * its address, and the small anonymous ones together.
 */
export function rssByMapping(pid: number): MappingRss {
  const byName: MappingRss = new Map();
  let name = "";
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const [, start, end, path] = header;
      const size = parseInt(end!, 16) - parseInt(start!, 16);
      name = path ? path : size >= LARGE_ANON_BYTES ? `[anon ${start}, ${size >> 20} MB]` : "[anon small]";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) byName.set(name, (byName.get(name) ?? 0) + Number(rss[1]));
  }
  return byName;
}

/** The mappings whose RSS moved most between `from` and `to`, as "name +N.N MB" lines. */
export function largestMoves(from: MappingRss, to: MappingRss, count = 8): string[] {
  const names = new Set([...from.keys(), ...to.keys()]);
  const moves = [...names].map((name) => ({ name, kb: (to.get(name) ?? 0) - (from.get(name) ?? 0) })).filter((m) => Math.abs(m.kb) >= 256);
  moves.sort((a, b) => Math.abs(b.kb) - Math.abs(a.kb));
  return moves.slice(0, count).map((m) => `${m.name} ${m.kb >= 0 ? "+" : ""}${(m.kb / 1024).toFixed(1)} MB (now ${((to.get(m.name) ?? 0) / 1024).toFixed(1)})`);
}
