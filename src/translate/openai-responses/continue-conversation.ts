import { badRequest } from "../../errors/gateway-error.ts";
import type { OutputItem } from "./convert-response.ts";
import type { InputItem } from "./request-schema.ts";

/** What an earlier Response gives the conversation that continues it: its own input, then its output. */
export interface EarlierTurn {
  readonly input: readonly InputItem[];
  readonly response: { readonly output: readonly OutputItem[] };
}

/** The Responses that lead to an id, oldest first, or the first of them that is not kept. */
export type ChainLookup = (id: string) => { links: readonly EarlierTurn[] } | { missing: string };

const NONE: readonly InputItem[] = [];

/** Why a Response or its item may not be kept, for a client that expected OpenAI's 30 days. */
export const WHY_NOT_KEPT =
  "The gateway keeps a Response for an hour from when it was made, for the user whose key asked, and none asked with store: false or that its database failed to write; it drops the oldest when it holds too much, and forgets a deleted one";

/**
 * The conversation a request continues by `previous_response_id`: for each Response of the
 * chain, oldest first, its input items then its output items. Their `instructions` are not
 * carried, as OpenAI does not carry them; the request's own are. A chain with any link not
 * kept is a 400 naming the field, the same whether the Response expired, is another user's or
 * never was, so that an id says nothing of another user's.
 */
export function conversationBefore(previousId: string | null | undefined, chainOf: ChainLookup): readonly InputItem[] {
  if (previousId == null) return NONE;
  const chain = chainOf(previousId);
  if ("missing" in chain) {
    const what = chain.missing === previousId ? `No response '${previousId}' is kept here` : `Response '${chain.missing}', which '${previousId}' continues, is not kept here`;
    throw badRequest(`Invalid 'previous_response_id': ${what}. ${WHY_NOT_KEPT}. Send the whole conversation in 'input' instead`, "previous_response_id");
  }
  return chain.links.flatMap((link) => [...link.input, ...link.response.output]);
}

/** A request's own input items, as kept: a string is one user message. */
export function inputItemsOf(input: string | readonly InputItem[]): readonly InputItem[] {
  return typeof input === "string" ? [{ type: "message", role: "user", content: input }] : input;
}
