import { join } from "node:path";

/** The repository's root folder. */
export const REPO_ROOT = join(import.meta.dir, "..", "..");

/** The runtimes the gateway runs on from this repository. */
export const RUNTIMES = ["bun", "node", "deno"] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** Whether `name` is one of RUNTIMES. */
export const isRuntime = (name: string): name is Runtime => (RUNTIMES as readonly string[]).includes(name);

const NODE_BUNDLE = join(REPO_ROOT, "dist", "node", "node.js");

/** The command line that starts the gateway from this repository under `runtime` (Node's runs the bundle of buildNodeBundle). */
export function gatewayCommand(runtime: Runtime): string[] {
  if (runtime === "node") return ["node", NODE_BUNDLE];
  if (runtime === "deno") return [join(REPO_ROOT, "node_modules", ".bin", "deno"), "run", "-A", join(REPO_ROOT, "src", "runtime", "deno.ts")];
  return [process.execPath, join(REPO_ROOT, "src", "runtime", "bun.ts")];
}

/** Bundles src/runtime/node.ts into dist/node/node.js as `npm run build:node` does (half a second); throws on failure. */
export function buildNodeBundle(): void {
  const build = Bun.spawnSync(["npm", "run", "--silent", "build:node"], { cwd: REPO_ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`npm run build:node failed: ${build.stderr.toString()}${build.stdout.toString()}`);
}
