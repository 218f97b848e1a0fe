/**
 * Builds the gateway into ONE self-contained executable (default: dist/gateway).
 *
 *   bun scripts/build.ts [--entry <file>] [--outfile <path>] [--jit-policy <n>]
 *
 * The binary targets the platform doing the build and embeds libsql's native
 * addon, so it runs from an empty folder with no node_modules and no bun.
 */
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import type { BunPlugin } from "bun";
import { familySync, MUSL } from "detect-libc";

/** Name of the `@libsql/<target>` package holding the native addon for this machine. */
function libsqlTarget(): string {
  // Mirrors libsql's requireNative() (neon's currentTarget() plus libsql's
  // detect-libc override): on Linux only glibc vs musl decides the suffix.
  const { platform, arch } = process;
  const musl = platform === "linux" && familySync() === MUSL;
  if (platform === "linux" && (arch === "x64" || arch === "arm64")) {
    return `linux-${arch}-${musl ? "musl" : "gnu"}`;
  }
  if (platform === "linux" && arch === "arm") return musl ? "linux-arm-musleabihf" : "linux-arm-gnueabihf";
  if (platform === "darwin" && (arch === "x64" || arch === "arm64")) return `darwin-${arch}`;
  if (platform === "win32" && (arch === "x64" || arch === "arm64")) return `win32-${arch}-msvc`;
  throw new Error(`libsql has no prebuilt addon for ${platform}-${arch}`);
}

/** Bun plugin that makes libsql's native addon visible to the bundler. */
function libsqlNativePlugin(target: string): BunPlugin {
  // libsql picks its addon at runtime with require(`@libsql/${target}`); the
  // bundler cannot follow a template string, so the compiled binary would look
  // for node_modules at runtime and fail. Swapping requireNative() for a
  // literal require lets `--compile` embed the .node file. This drops the
  // LIBSQL_JS_DEV escape hatch, which only matters when hacking on libsql.
  const requireNative = /function requireNative\(\) \{[\s\S]*?require\(`@libsql\/\$\{target\}`\);\s*\}/;
  return {
    name: "libsql-static-native",
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/](index|promise)\.js$/ }, async ({ path }) => {
        const source = await Bun.file(path).text();
        // Fail loudly if a libsql upgrade changes the shape: a silent miss
        // would ship a binary that only breaks on the server.
        if (!requireNative.test(source)) throw new Error(`libsql-static-native: requireNative() not found in ${path}`);
        const contents = source.replace(
          requireNative,
          `function requireNative() { return require(${JSON.stringify(`@libsql/${target}`)}); }`,
        );
        return { contents, loader: "js" };
      });
    },
  };
}

/**
 * How much more reluctant than normal JavaScriptCore's JIT tiers start with. Until the API's
 * first request nothing the gateway runs is worth compiling: start-up's code runs once, the
 * admin set-up a few times, and the polls and heartbeats once a second or less. Compiled at
 * the normal policy, they paged in the optimizing compiler for nothing, and an untouched
 * gateway grew from 50 to 52.5 MB in its first 90 s. The gateway sets the normal policy at its
 * first API request (`apiTrafficBegan` in src/runtime/bun.ts); at 10 a few start-up functions
 * still compiled.
 */
const JIT_POLICY_UNTIL_TRAFFIC = 100;

/** Parses argv, compiles the executable and prints its size. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      entry: { type: "string", default: "src/runtime/bun.ts" },
      outfile: { type: "string", default: "dist/gateway" },
      "jit-policy": { type: "string", default: String(JIT_POLICY_UNTIL_TRAFFIC) },
    },
  });
  const { entry, outfile } = values;
  const target = libsqlTarget();

  await Bun.build({
    entrypoints: [entry],
    // No compile.target: build for the machine we're on, matching `target` above.
    compile: { outfile, jitPolicy: Number(values["jit-policy"]) },
    target: "bun",
    format: "esm",
    minify: true,
    // Parsed ahead of time: the executable carries JavaScriptCore bytecode beside the source,
    // so start-up and each first-run route skip parsing. The parser's work and the source text
    // it pages in were about 1.5 MB of idle RSS (49.0-49.2 MB against 50.6-50.7 after the
    // bench's admin set-up, three alternating starts from disk, Bun 1.4.5).
    bytecode: true,
    plugins: [libsqlNativePlugin(target)],
  }); // throws (AggregateError with the build logs) on failure

  const mb = statSync(outfile).size / (1024 * 1024);
  console.log(`built ${outfile} (${mb.toFixed(1)} MB, libsql addon @libsql/${target})`);
}

await main();
