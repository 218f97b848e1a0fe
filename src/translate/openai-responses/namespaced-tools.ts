import type { ToolDefinition } from "../../canonical/chat.ts";
import { functionToolOf } from "../openai-chat/convert-request-to-canonical.ts";
import { badRequest } from "../../errors/gateway-error.ts";

/** A function tool as the Responses API's `tools` holds it, alone or within a namespace. */
interface FunctionTool {
  type: "function";
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

/** A `namespace` tool: function tools the model calls by name within the namespace (Codex CLI groups its sub-agent tools so). */
interface NamespaceTool {
  type: "namespace";
  name: string;
  description?: string | null;
  tools: FunctionTool[];
}

/** A function's name as the Responses API writes it in a function_call: the namespace it is in, if any. */
export interface CallName {
  name: string;
  namespace?: string;
}

/** A namespace's functions by the one name each goes upstream under. */
export type NamespacedNames = ReadonlyMap<string, Required<CallName>>;

/**
 * The one name a function within a namespace goes upstream under. Chat upstreams have no
 * namespaces, and every one of them takes underscores in a function's name.
 */
export const qualifiedToolName = (call: CallName): string => (call.namespace ? `${call.namespace}__${call.name}` : call.name);

/**
 * A Responses body's tools as canonical tools: a namespace's functions are offered one by one
 * under their qualified names, each described with its namespace's description before its own,
 * which is what the model would have read of the namespace.
 */
export function canonicalToolsOf(tools: readonly (FunctionTool | NamespaceTool)[]): ToolDefinition[] {
  return tools.flatMap((tool) => {
    if (tool.type === "function") return [functionToolOf(tool)];
    return tool.tools.map((fn) => {
      const description = [tool.description, fn.description].filter(Boolean).join("\n\n") || undefined;
      return functionToolOf({ ...fn, name: qualifiedToolName({ namespace: tool.name, name: fn.name }), description });
    });
  });
}

const isNamespace = (tool: { type: string }): tool is NamespaceTool => tool.type === "namespace";
const isFunction = (tool: { type: string }): tool is FunctionTool => tool.type === "function";

/** A function as an error names it. */
const describe = (call: CallName) => (call.namespace ? `function '${call.name}' of namespace '${call.namespace}'` : `function '${call.name}'`);

/** The 400 of two functions that would go upstream under one name. */
const sharedNameError = (first: CallName, second: CallName, upstream: string) =>
  badRequest(`Invalid 'tools': ${describe(first)} and ${describe(second)} would both go upstream as '${upstream}'`, "tools");

/**
 * The request's namespaced functions by qualified name, or undefined when it has none (most
 * requests). A namespace's function that would go upstream under the name of another function
 * (`a__b` beside namespace `a`'s `b`) is a 400: the upstream could not tell which one the model
 * called, and no other separator is safe, as each character an upstream takes in a name may be
 * in the names themselves. Plain functions of one name are the upstream's to judge, as always.
 */
export function namespacedNamesOf(tools: readonly { type: string }[] | null | undefined): NamespacedNames | undefined {
  if (!tools) return undefined;
  const namespaces = tools.filter(isNamespace);
  if (namespaces.length === 0) return undefined;
  const names = new Map<string, Required<CallName>>();
  for (const space of namespaces) {
    for (const fn of space.tools) {
      const call = { namespace: space.name, name: fn.name };
      const qualified = qualifiedToolName(call);
      const other = names.get(qualified);
      if (other) throw sharedNameError(other, call, qualified);
      names.set(qualified, call);
    }
  }
  for (const tool of tools) {
    if (!isFunction(tool)) continue;
    const namespaced = names.get(tool.name);
    if (namespaced) throw sharedNameError({ name: tool.name }, namespaced, tool.name);
  }
  return names;
}

/**
 * The name a tool_choice's function goes upstream under. The Responses API names a namespace's
 * function there `<namespace>.<function>` (OpenAI's Agents SDKs write it so; a tool's own name
 * holds no dot). A name of no namespace's function goes on as sent, as one of no tool does:
 * the upstream judges it.
 */
export function chosenToolName(name: string, namespaced: NamespacedNames | undefined): string {
  if (!namespaced) return name;
  const dot = name.indexOf(".");
  if (dot < 0) return name;
  const chosen = { namespace: name.slice(0, dot), name: name.slice(dot + 1) };
  const qualified = qualifiedToolName(chosen);
  const known = namespaced.get(qualified);
  // `a.b__c` and namespace `a__b`'s `c` share a qualified name; only the function named is forced.
  return known?.namespace === chosen.namespace && known.name === chosen.name ? qualified : name;
}

/** How a call the upstream made under `name` is written for the caller: within its namespace when it is a namespace's function. */
export const callNameOf = (name: string, namespaced: NamespacedNames | undefined): CallName => namespaced?.get(name) ?? { name };
