import { hasAscii } from "./ascii-bytes.ts";
import { readRange, type RandomAccessFile } from "./random-access-file.ts";

// Some taggers write more than one tag; past this many the file is not one we probe.
const MAX_TAGS = 4;

/**
 * The offset of the first byte after any ID3v2 tags at the start of the file (0 when none).
 * MP3s usually carry one, and some FLAC files do too although the format does not allow it.
 */
export async function skipId3v2(file: RandomAccessFile): Promise<number> {
  let offset = 0;
  for (let tags = 0; tags < MAX_TAGS; tags++) {
    const head = await readRange(file, offset, 10);
    // Size bytes are "syncsafe": 7 bits each, so a set top bit means this is not a tag.
    if (head.length < 10 || !hasAscii(head, 0, "ID3") || head[3] === 0xff || head.subarray(6, 10).some((b) => b >= 0x80)) break;
    const size = ((head[6]! << 21) | (head[7]! << 14) | (head[8]! << 7) | head[9]!) >>> 0;
    const footer = head[5]! & 0x10 ? 10 : 0;
    offset += 10 + size + footer;
  }
  return offset;
}
