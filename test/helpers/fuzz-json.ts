/**
 * Seeded mutation of valid JSON request bodies, for the fuzz tests: a case is drawn from a
 * valid body and a seed alone, so a failure printed with its seed and index reproduces.
 * No gateway code is imported here.
 */
import { seededRandom } from "./common.ts";

export type Random = () => number;

/** One request to send: the body as bytes or text, and its Content-Type (null sends none). */
export interface FuzzCase {
  /** What was done to the valid body, for the failure report. */
  label: string;
  body: string | Uint8Array<ArrayBuffer>;
  contentType: string | null;
}

type Path = Array<string | number>;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A seed for case `index` of `name`: each case can be drawn again on its own. */
export function caseSeed(seed: number, name: string, index: number): number {
  let hash = seed >>> 0;
  for (const char of `${name}#${index}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return hash;
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Sets `key` on `target` as an own property, even `__proto__`, which `target[key] =` would take as the prototype. */
function defineOwn(target: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Every path below the root: each object key and array index, at any depth. */
function pathsOf(value: Json, prefix: Path = [], into: Path[] = []): Path[] {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      into.push([...prefix, index]);
      pathsOf(item, [...prefix, index], into);
    });
  } else if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) {
      into.push([...prefix, key]);
      pathsOf(value[key]!, [...prefix, key], into);
    }
  }
  return into;
}

/** The objects in `value` (the root included), for adding a field to one. */
function objectsOf(value: Json, into: Array<Record<string, Json>> = []): Array<Record<string, Json>> {
  if (Array.isArray(value)) value.forEach((item) => objectsOf(item, into));
  else if (value !== null && typeof value === "object") {
    into.push(value);
    for (const key of Object.keys(value)) objectsOf(value[key]!, into);
  }
  return into;
}

/** Words the chat, media and admin schemas give meaning to, so a changed field can name another valid thing. */
export const SCHEMA_WORDS = [
  "system", "developer", "user", "assistant", "tool", "function", "model", "none", "auto", "required", "any",
  "text", "image", "image_url", "input_text", "input_image", "output_text", "input_audio", "file", "document",
  "tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "web_search_20250305",
  "function_call", "function_call_output", "message", "reasoning", "refusal", "json_object", "json_schema",
  "ephemeral", "enabled", "disabled", "active", "suspended", "revoked", "management", "chat", "embeddings",
  "rerank", "images", "audio", "OBJECT", "STRING", "ARRAY", "NUMBER", "INTEGER", "BOOLEAN", "NULL", "ANY",
  "STOP", "MAX_TOKENS", "data:image/png;base64,AAAA", "data:,", "https://example.com/a.png", "base64", "url",
  "float", "b64_json", "mp3", "wav", "pcm", "opus", "aac", "flac", "sse", "hd", "standard", "high", "low",
  "256x256", "1024x1024", "0x0", "99999x99999", "demo-chat", "demo-embed", "demo-image", "demo-tts",
  "demo-rerank", "demo-transcribe", "USD", "EUR", "2099-01-01T00:00:00Z", "1970-01-01T00:00:00Z",
];

/** Every string in `value`, keys included: words the body's own schema knows. */
export function wordsOf(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === "string") into.add(value);
  else if (Array.isArray(value)) value.forEach((item) => wordsOf(item, into));
  else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      into.add(key);
      wordsOf(item, into);
    }
  }
  return into;
}

function parentOf(root: Json, path: Path): Json {
  let node = root;
  for (const step of path.slice(0, -1)) node = (node as Record<string | number, Json>)[step]!;
  return node;
}

function setAt(root: Json, path: Path, value: Json): void {
  const parent = parentOf(root, path);
  const last = path.at(-1)!;
  if (Array.isArray(parent)) parent[last as number] = value;
  else defineOwn(parent as Record<string, Json>, last as string, value);
}

function deleteAt(root: Json, path: Path): void {
  const parent = parentOf(root, path);
  const last = path.at(-1)!;
  if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete (parent as Record<string, Json>)[last as string];
}

const nestedArray = (levels: number): Json => JSON.parse(`${"[".repeat(levels)}1${"]".repeat(levels)}`);
const nestedObject = (levels: number): Json => JSON.parse(`${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`);

/** Values that have broken parsers before: wrong types, edge numbers, odd strings, odd shapes. */
const NASTY: ReadonlyArray<() => Json> = [
  () => null,
  () => true,
  () => false,
  () => 0,
  () => -1,
  () => 1,
  () => 0.5,
  () => -0.000001,
  () => 1e308,
  () => -1e308,
  () => 2 ** 53 + 2,
  () => 4_294_967_297,
  () => 5e-324,
  () => "NaN",
  () => "Infinity",
  () => "-Infinity",
  () => "1e309",
  () => "-1",
  () => "0",
  () => "",
  () => " ",
  () => "x".repeat(100_000),
  () => "\u0000",
  () => "a\u0000b",
  () => "\ud800",
  () => "\u202e\ufeff",
  () => "😀".repeat(500),
  () => "null",
  () => "%s%n%x{0}",
  () => "../../etc/passwd",
  () => [],
  () => ({}),
  () => [[]],
  () => [null],
  () => [1, "a", {}, [], null, true],
  () => nestedArray(60),
  () => nestedObject(60),
  () => nestedArray(300),
  () => JSON.parse('{"__proto__":{"polluted":true,"role":"system"}}'),
  () => JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
  () => JSON.parse('{"__proto__":null}'),
  () => JSON.parse('{"toString":1,"valueOf":"x","hasOwnProperty":null}'),
  () => ({ type: "text" }),
  () => ({ type: "function" }),
  () => ({ text: "hi" }),
];

/** Names of fields no endpoint takes, and names that collide with Object.prototype's. */
const ODD_KEYS = ["unknown_field", "__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "", "x".repeat(300)];

/** A replacement value: a nasty one, a word of the body's own, or another subtree of it. */
function replacement(random: Random, base: Json, words: readonly string[]): Json {
  const roll = random();
  if (roll < 0.6) return pick(random, NASTY)();
  if (roll < 0.8) return pick(random, words);
  const paths = pathsOf(base);
  if (paths.length === 0) return null;
  const source = pick(random, paths);
  return structuredClone(source.reduce<Json>((node, step) => (node as Record<string | number, Json>)[step]!, base));
}

const EDGE_NUMBERS = [0, -1, 1, 2, 0.5, 1e-7, 128, 129, 4096, 1e6, 2 ** 31, 2 ** 53 + 2, 1e308, -1e308, 5e-324];
const ODD_STRINGS = ["", " ", "x".repeat(5000), "\u0000", "\ud800", "😀", "null", "NaN", "-1", "1e309", "models/", "models/x:y", "{}", "[]", "*", "/", "?", "%00"];

/**
 * A value of the same JSON type as `value`, so the body still passes most checks and reaches
 * what runs after validation: another word for a string, an edge for a number, the other
 * boolean, an array emptied, repeated or with an element copied.
 */
function sameTypeAs(random: Random, value: Json, words: readonly string[]): Json {
  if (typeof value === "string") return random() < 0.7 ? pick(random, words) : pick(random, ODD_STRINGS);
  if (typeof value === "number") return pick(random, EDGE_NUMBERS);
  if (typeof value === "boolean") return !value;
  if (Array.isArray(value)) {
    const roll = random();
    if (roll < 0.3 || value.length === 0) return [];
    if (roll < 0.6) return [...value, ...structuredClone(value)];
    return Array.from({ length: 200 }, () => structuredClone(pick(random, value)));
  }
  return value === null ? pick(random, words) : {};
}

/** One structural change to `body` (a clone): replace, delete or add a field. Returns what it did. */
function mutateTree(random: Random, body: Json, words: readonly string[]): string {
  const paths = pathsOf(body);
  const roll = random();
  if (roll < 0.3 && paths.length > 0) {
    const path = pick(random, paths);
    const value = sameTypeAs(random, path.reduce<Json>((node, step) => (node as Record<string | number, Json>)[step]!, body), words);
    setAt(body, path, value);
    return `same-type ${path.join(".")} = ${preview(value)}`;
  }
  if (roll < 0.65 && paths.length > 0) {
    const path = pick(random, paths);
    const value = replacement(random, body, words);
    setAt(body, path, value);
    return `replace ${path.join(".")} with ${preview(value)}`;
  }
  if (roll < 0.85 && paths.length > 0) {
    const path = pick(random, paths);
    deleteAt(body, path);
    return `delete ${path.join(".")}`;
  }
  const target = pick(random, objectsOf(body));
  const key = pick(random, ODD_KEYS);
  const value = replacement(random, body, words);
  defineOwn(target, key, value);
  return `add '${key.slice(0, 20)}' = ${preview(value)}`;
}

/** Text a JSON parser must refuse, or read into something odd, made from the valid body. */
function rawText(random: Random, text: string): { label: string; body: string } {
  const cut = 1 + Math.floor(random() * Math.max(1, text.length - 1));
  const forms: Array<[string, () => string]> = [
    ["truncated", () => text.slice(0, cut)],
    ["trailing garbage", () => `${text}}x`],
    ["two bodies", () => `${text}${text}`],
    ["single quotes", () => text.replaceAll('"', "'")],
    ["byte order mark", () => `\ufeff${text}`],
    ["NaN literal", () => text.replace(/:(-?\d+(\.\d+)?)/, ":NaN")],
    ["1e999 literal", () => text.replace(/:(-?\d+(\.\d+)?)/, ":1e999")],
    ["-0 literal", () => text.replace(/:(-?\d+(\.\d+)?)/, ":-0")],
    ["duplicate first key", () => text.replace(/^\{("[^"]*"):/, "{$1:null,$1:")],
    ["comment", () => `/* c */${text}`],
    ["trailing comma", () => text.replace(/\}$/, ",}")],
    ["deep nesting", () => `${"[".repeat(50_000)}${"]".repeat(50_000)}`],
    ["unclosed string", () => '{"model":"'],
    ["empty", () => ""],
    ["whitespace", () => " \n\t "],
    ["null", () => "null"],
    ["top-level array", () => `[${text}]`],
    ["top-level string", () => JSON.stringify(text)],
    ["top-level number", () => "42"],
    ["top-level true", () => "true"],
    ["empty array", () => "[]"],
  ];
  const [label, make] = pick(random, forms);
  return { label, body: make() };
}

/** A short view of a value for a label. */
function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}... (${text.length} chars)` : text;
}

const WRONG_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/json; charset=latin1", null];

/**
 * Case `index` of endpoint `name`: the valid body `base` with one to three structural
 * changes, raw text a parser must refuse, or a body under a wrong Content-Type.
 */
export function fuzzCase(seed: number, name: string, index: number, base: unknown, words: readonly string[]): FuzzCase {
  const random = seededRandom(caseSeed(seed, name, index));
  const body = structuredClone(base) as Json;
  const roll = random();
  if (roll < 0.12) {
    const raw = rawText(random, JSON.stringify(body));
    return { label: `raw: ${raw.label}`, body: raw.body, contentType: "application/json" };
  }
  if (roll < 0.16) {
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    // A byte that is never UTF-8 inside the first string value.
    const at = Math.max(0, bytes.indexOf(0x22, bytes.indexOf(0x3a)) + 1);
    return { label: "invalid UTF-8 byte", body: new Uint8Array([...bytes.slice(0, at), 0xff, 0xfe, ...bytes.slice(at)]), contentType: "application/json" };
  }
  if (roll < 0.22) {
    // The valid body itself, or a changed one, under a Content-Type that is not JSON's.
    const contentType = pick(random, WRONG_TYPES);
    const label = random() < 0.5 ? "unchanged" : mutateTree(random, body, words);
    return { label: `${label}; content-type ${contentType}`, body: JSON.stringify(body), contentType };
  }
  const labels = [mutateTree(random, body, words)];
  // Several changes at once, so a body can be odd in two places that only meet downstream.
  const more = roll > 0.7 ? 1 + Math.floor(random() * 4) : 0;
  for (let i = 0; i < more; i++) labels.push(mutateTree(random, body, words));
  return { label: labels.join("; "), body: JSON.stringify(body), contentType: "application/json" };
}
