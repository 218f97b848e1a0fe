import * as v from "valibot";
import { badRequest, bodyCutOff, bodyTimedOut, type GatewayError } from "../errors/gateway-error.ts";
import { settleWithin, TIMED_OUT } from "../streams/settle-within.ts";
import { nestsDeeperThan } from "./json-depth.ts";

/**
 * How deep a request body's JSON may nest. Code that walks client JSON (JSON.stringify of a
 * tool call's input, schema normalisation) recurses, so a body nested tens of thousands of
 * levels would overflow the stack; no real request comes near this.
 */
export const MAX_JSON_DEPTH = 128;

/** The dotted path of a valibot issue, e.g. `messages[0].role`. */
function pathOf(issue: v.BaseIssue<unknown>): string {
  let path = "";
  for (const item of issue.path ?? []) {
    const key = (item as { key: unknown }).key;
    path += typeof key === "number" ? `[${key}]` : path === "" ? String(key) : `.${String(key)}`;
  }
  return path;
}

/**
 * The issue to report: for a value that matched none of a union's options, the deepest issue
 * inside them, when one option got further than the union's own level (an array of blocks
 * with one bad block says which field of which block, not just "string or array"). Of two as
 * deep, a check the value failed (an integer, a length) says more than a type it is not: that
 * option was the one meant.
 */
function mostSpecific(issue: v.BaseIssue<unknown>): v.BaseIssue<unknown> {
  if (issue.type !== "union" || !issue.issues) return issue;
  let deepest: v.BaseIssue<unknown> | null = null;
  for (const inner of issue.issues.map(mostSpecific)) {
    // Paths inside the options start at the union's value.
    const depth = inner.path?.length ?? 0;
    const best = deepest?.path?.length ?? 0;
    if (depth > best || (depth === best && deepest?.kind === "schema" && inner.kind === "validation")) deepest = inner;
  }
  return deepest ? { ...deepest, path: [...(issue.path ?? []), ...deepest.path!] as typeof issue.path } : issue;
}

/**
 * A key a strict object does not take, reported in valibot's own words ("Invalid key:
 * Expected never but received ..."), which an operator cannot read; a schema that gives its
 * own message for such keys keeps it.
 */
function isUnknownKey(issue: v.BaseIssue<unknown>): boolean {
  return issue.type === "strict_object" && issue.expected === "never" && issue.message.startsWith("Invalid key:");
}

/** The 400 for a valibot issue: a one-line message naming the offending field, and that field as its `param`. */
export function issueError(reported: v.BaseIssue<unknown>): GatewayError {
  const issue = mostSpecific(reported);
  const path = pathOf(issue);
  const param = path === "" ? undefined : path;
  if (isUnknownKey(issue)) return badRequest(`Unknown field '${path}'`, param);
  if (issue.kind === "schema" && issue.input === undefined && path !== "") return badRequest(`'${path}' is required`, param);
  return badRequest(path === "" ? issue.message : `Invalid '${path}': ${issue.message}`, param);
}

/**
 * Validates `input` against `schema`, or throws a 400 naming the first bad field. Validation
 * stops at that first issue: collecting every one made an issue object (holding its path and
 * input) per bad item, so a body of a million wrong parts in an array took seconds and
 * gigabytes to refuse, and a few such bodies at once ended the process.
 */
export function parseOrThrow<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (!result.success) throw issueError(result.issues[0]);
  return result.output;
}

/**
 * Reads a request body as a JSON object, or throws a 400 when it is not one, and a 408 when it
 * has not come whole within `timeoutMs`: one timer for the whole read, since a body of at most
 * GATEWAY_MAX_BODY_BYTES needs no pause-by-pause watch, and a read loop would cost every request.
 */
export async function readJsonBody(request: Request, timeoutMs: number): Promise<unknown> {
  let text: string | typeof TIMED_OUT;
  try {
    text = await settleWithin(request.text(), timeoutMs);
  } catch {
    throw bodyCutOff();
  }
  if (text === TIMED_OUT) throw bodyTimedOut(timeoutMs);
  if (text.trim() === "") throw badRequest("Request body is empty; a JSON object is expected");
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw badRequest(`Request body has JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("Request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("Request body must be a JSON object");
  return body;
}

/** A number in [min, max], with a message that says so. */
export const numberInRange = (min: number, max: number) =>
  v.pipe(
    v.number(`must be a number between ${min} and ${max}`),
    v.finite(`must be a number between ${min} and ${max}`),
    v.minValue(min, `must be a number between ${min} and ${max}`),
    v.maxValue(max, `must be a number between ${min} and ${max}`),
  );

/** An integer in [min, max], with a message that says so. */
export const integerInRange = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`;
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message));
};

/** An integer of at least `min`. */
export const integerAtLeast = (min: number) =>
  v.pipe(v.number(`must be an integer >= ${min}`), v.integer(`must be an integer >= ${min}`), v.minValue(min, `must be an integer >= ${min}`));

/**
 * The fields of a JSON object `body`, already parsed with the object `schema`, that the schema
 * does not name: what valibot's object() leaves out of its output without a word.
 */
export function fieldsOutside(schema: { readonly entries: Readonly<Record<string, unknown>> }, body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object") return {};
  return Object.fromEntries(Object.entries(body).filter(([name]) => !Object.hasOwn(schema.entries, name)));
}
