import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { rssMb } from "../../test/helpers/process-memory.ts";

/** What one instance holds at one moment, from /proc and its TMPDIR. */
export interface Sample {
  label: string;
  instance: number;
  rssMb: number;
  fds: number;
  sockets: number;
  tempFiles: number;
}

/** Files anywhere under `dir` (the upload spools live in a folder of their own there). */
function filesUnder(dir: string): number {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) count += entry.isDirectory() ? filesUnder(join(dir, entry.name)) : 1;
  return count;
}

/** Reads an instance's RSS, open file descriptors, how many of them are sockets, and the files left in its TMPDIR. */
export function sample(label: string, instance: number, pid: number, tmpDir: string): Sample {
  const fdDir = `/proc/${pid}/fd`;
  const links = readdirSync(fdDir).map((fd) => {
    try {
      return readlinkSync(join(fdDir, fd));
    } catch {
      return ""; // closed between the listing and the read
    }
  });
  return { label, instance, rssMb: rssMb(pid), fds: links.length, sockets: links.filter((l) => l.startsWith("socket:")).length, tempFiles: filesUnder(tmpDir) };
}

/** The samples as a fixed-width table. */
export function table(samples: readonly Sample[]): string {
  const head = ["when", "instance", "RSS MB", "fds", "sockets", "temp files"];
  const rows = samples.map((s) => [s.label, String(s.instance), s.rssMb.toFixed(1), String(s.fds), String(s.sockets), String(s.tempFiles)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(head), ...rows.map(line)].join("\n");
}
