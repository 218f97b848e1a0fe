import { readEbmlFloat, readEbmlHeader, readEbmlUint, readEbmlVint } from "./read-ebml.ts";
import { readRange, type RandomAccessFile } from "./random-access-file.ts";

const EBML = 0x1a45dfa3;
const DOC_TYPE = 0x4282;
const SEGMENT = 0x18538067;
const INFO = 0x1549a966;
const TIMESTAMP_SCALE = 0x2ad7b1;
const DURATION = 0x4489;
const CLUSTER = 0x1f43b675;
const CLUSTER_TIMESTAMP = 0xe7;
const SIMPLE_BLOCK = 0xa3;
const BLOCK_GROUP = 0xa0;
const BLOCK = 0xa1;
// Cluster children that may sit between blocks: Position, PrevSize, Void, CRC-32.
const CLUSTER_FILLER = new Set([0xa7, 0xab, 0xec, 0xbf]);

const HEAD_BYTES = 64 * 1024;
// MediaRecorder starts a cluster at least every ~32 s (block timestamps are 16-bit); at
// audio bitrates that is well under this.
const TAIL_BYTES = 1024 * 1024;
const MAX_ELEMENTS = 256;
const NANOSECONDS = 1e9;

/** Timestamp scale and duration from the Segment's Info, read from the start of the file. */
async function readInfo(file: RandomAccessFile, head: Uint8Array): Promise<{ scale: number; duration: number | null } | null> {
  const ebml = readEbmlHeader(head, 0);
  if (!ebml || ebml.id !== EBML || ebml.size === null) return null;
  const docType = findChild(head, ebml.body, ebml.body + ebml.size, DOC_TYPE);
  const name = docType ? new TextDecoder().decode(head.subarray(docType.body, docType.end)).replace(/\0+$/, "") : "matroska";
  if (name !== "webm" && name !== "matroska") return null;
  const segment = readEbmlHeader(head, ebml.body + ebml.size);
  if (!segment || segment.id !== SEGMENT) return null;
  let offset = segment.body;
  for (let i = 0; i < MAX_ELEMENTS && offset < file.size; i++) {
    const bytes = await readRange(file, offset, 12);
    const element = readEbmlHeader(bytes, 0);
    if (!element || element.id === CLUSTER || element.size === null) break;
    if (element.id === INFO) {
      const info = await readRange(file, offset + element.body, Math.min(element.size, HEAD_BYTES));
      const scale = findChild(info, 0, info.length, TIMESTAMP_SCALE);
      const duration = findChild(info, 0, info.length, DURATION);
      return {
        scale: scale ? readEbmlUint(info, scale.body, scale.end - scale.body) : 1_000_000,
        duration: duration ? readEbmlFloat(info, duration.body, duration.end - duration.body) : null,
      };
    }
    offset += element.body + element.size;
  }
  return { scale: 1_000_000, duration: null };
}

/** The first child with `id` among the elements between `start` and `end` of `bytes`. */
function findChild(bytes: Uint8Array, start: number, end: number, id: number): { body: number; end: number } | null {
  let offset = start;
  for (let i = 0; i < MAX_ELEMENTS && offset < end; i++) {
    const element = readEbmlHeader(bytes, offset);
    if (!element || element.size === null || element.body + element.size > end) return null;
    if (element.id === id) return { body: element.body, end: element.body + element.size };
    offset = element.body + element.size;
  }
  return null;
}

/**
 * Elements the tail search reads, all candidate clusters together. A real last cluster is found
 * at the first or second candidate from the end; a tail crafted of cluster IDs, each followed
 * by the same run of small elements, made the search quadratic and held the event loop for
 * 25 s per 256 KiB upload.
 */
const TAIL_ELEMENT_BUDGET = 100_000;

/**
 * The timestamp of the latest block in the cluster at `offset`, or null if it does not parse.
 * Each element read takes one from `budget.left`; none left is null too.
 */
function lastBlockTimestamp(bytes: Uint8Array, offset: number, budget: { left: number }): number | null {
  const cluster = readEbmlHeader(bytes, offset);
  if (!cluster || cluster.id !== CLUSTER) return null;
  // A live recording leaves the size unknown: the cluster then runs to the next non-child.
  const end = cluster.size === null ? bytes.length : Math.min(bytes.length, cluster.body + cluster.size);
  let base: number | null = null;
  let latest: number | null = null;
  let at = cluster.body;
  while (at < end) {
    if (--budget.left < 0) return null;
    const child = readEbmlHeader(bytes, at);
    if (!child || child.size === null || child.body + child.size > end) break;
    let block = child.id === SIMPLE_BLOCK ? child.body : null;
    if (child.id === BLOCK_GROUP) block = findChild(bytes, child.body, child.body + child.size, BLOCK)?.body ?? null;
    if (child.id === CLUSTER_TIMESTAMP) base = readEbmlUint(bytes, child.body, child.size);
    else if (block !== null) {
      // Block body: track number (a vint, at most 8 bytes), then a signed 16-bit relative time.
      const track = readEbmlVint(bytes, block, false);
      const timeAt = track ? block + track.length : end;
      if (timeAt + 2 > end) break;
      const relative = new DataView(bytes.buffer, bytes.byteOffset + timeAt, 2).getInt16(0);
      latest = Math.max(latest ?? -Infinity, relative);
    } else if (!CLUSTER_FILLER.has(child.id)) break;
    at = child.body + child.size;
  }
  return base === null || latest === null ? null : base + latest;
}

/**
 * The duration of a WebM/Matroska file: Info's Duration times TimestampScale. Live
 * recordings (browser MediaRecorder) have no Duration; the start of the last block in the
 * tail gives it then, short by that block's own length (one codec frame, ~20 ms for Opus).
 */
export async function probeWebm(file: RandomAccessFile): Promise<number | null> {
  const info = await readInfo(file, await readRange(file, 0, HEAD_BYTES));
  if (!info || info.scale <= 0) return null;
  if (info.duration !== null && info.duration > 0) return (info.duration * info.scale) / NANOSECONDS;
  const tailStart = Math.max(0, file.size - TAIL_BYTES);
  const tail = await readRange(file, tailStart, TAIL_BYTES);
  const budget = { left: TAIL_ELEMENT_BUDGET };
  for (let at = tail.length - 4; at >= 0 && budget.left > 0; at--) {
    if (tail[at] !== 0x1f || tail[at + 1] !== 0x43 || tail[at + 2] !== 0xb6 || tail[at + 3] !== 0x75) continue;
    const timestamp = lastBlockTimestamp(tail, at, budget);
    if (timestamp !== null) return (Math.max(0, timestamp) * info.scale) / NANOSECONDS;
  }
  return null;
}
