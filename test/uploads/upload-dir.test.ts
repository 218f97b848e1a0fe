import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createTempUpload } from "../../src/runtime/node-temp-upload.ts";

/**
 * Uploads are spooled only into a folder that is this user's alone: in a shared temp folder
 * another local user may have made the upload folder first, and as its owner could swap a
 * file between its write and its read. Such a folder is passed over for a private one.
 */

const root = mkdtempSync(join(tmpdir(), "upload-dir-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Where an upload into `dir` lands, and that folder's permission bits; the file is removed. */
async function landing(dir: string): Promise<{ folder: string; mode: number }> {
  const upload = await createTempUpload(dir);
  const folder = dirname(upload.path);
  await upload.remove();
  return { folder, mode: statSync(folder).mode & 0o777 };
}

test("a folder the gateway makes, or one of its own that only it may write in, is used", async () => {
  expect(await landing(join(root, "made"))).toEqual({ folder: join(root, "made"), mode: 0o700 });
  mkdirSync(join(root, "own"), { mode: 0o755 });
  expect((await landing(join(root, "own"))).folder).toBe(join(root, "own"));
});

test("a folder others may write in is passed over for a private one beside it", async () => {
  const shared = join(root, "shared");
  mkdirSync(shared);
  chmodSync(shared, 0o777);
  const { folder, mode } = await landing(shared);
  expect(folder).not.toBe(shared);
  expect(folder.startsWith(`${shared}-`)).toBe(true);
  expect(mode).toBe(0o700);
  // The next upload goes to the same private folder, and to a new one if a temp cleaner took it.
  expect((await landing(shared)).folder).toBe(folder);
  rmSync(folder, { recursive: true });
  const again = await landing(shared);
  expect(again.folder).not.toBe(shared);
  expect(again.mode).toBe(0o700);
});

test("a folder a temp cleaner removed while the gateway runs is made again", async () => {
  const dir = join(root, "cleaned");
  expect((await landing(dir)).folder).toBe(dir);
  rmSync(dir, { recursive: true });
  expect(await landing(dir)).toEqual({ folder: dir, mode: 0o700 });
});

test("a symbolic link in the folder's place is passed over too", async () => {
  const target = join(root, "elsewhere");
  mkdirSync(target, { mode: 0o700 });
  const link = join(root, "link");
  symlinkSync(target, link);
  const { folder } = await landing(link);
  expect(folder).not.toBe(link);
  expect(folder.startsWith(`${link}-`)).toBe(true);
});
