import { readFileSync } from "node:fs";

/** Resident set size of a process in MB to one decimal, from /proc/PID/status (VmRSS); NaN if it cannot be read. */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : Number.NaN;
}
