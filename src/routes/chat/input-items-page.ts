import { badRequest } from "../../errors/gateway-error.ts";
import { cursorPage } from "../model-pages.ts";
import { outputText } from "../../translate/openai-responses/convert-response.ts";
import type { InputItem } from "../../translate/openai-responses/request-schema.ts";

/** OpenAI's page sizes for input_items: 20 unless `limit` says, at most 100. */
export const INPUT_ITEMS_PAGE = { fallback: 20, max: 100 };

/** Where a listed item's id comes from when the request gave it none: its type's prefix. */
const ID_PREFIXES: Record<string, string> = { message: "msg", function_call: "fc", function_call_output: "fco", reasoning: "rs" };

/**
 * An input item as OpenAI lists it: with an id (its own, or one made of the Response's and
 * its place, the same at every listing, so a page's last id can be the next one's cursor), a
 * status, and a message's string content as one part.
 */
function listedItem(item: InputItem, responseId: string, place: number) {
  const type = item.type ?? "message";
  const own = "id" in item && typeof item.id === "string" ? item.id : undefined;
  const id = own ?? `${ID_PREFIXES[type]}_${responseId.replace(/^resp_/, "")}_${place}`;
  const status = "status" in item && item.status ? item.status : "completed";
  if (item.type !== undefined && item.type !== "message") return { ...item, id, status };
  const text = item.content;
  const content = typeof text === "string" ? [item.role === "assistant" ? outputText(text) : { type: "input_text", text }] : text;
  return { ...item, type, id, status, content };
}

/** The query of GET /v1/responses/{id}/input_items, as the openai SDK's inputItems.list sends it. */
export interface InputItemsQuery {
  limit: number;
  order: string | undefined;
  after: string | undefined;
}

/**
 * One page of a kept Response's input items as OpenAI lists them (`object: "list"`), newest
 * first unless `order` is asc, after the item `after` names: the openai SDK's pager sends the
 * last id of a page back as `after` while `has_more`.
 */
export function inputItemsPage(input: readonly InputItem[], responseId: string, query: InputItemsQuery) {
  if (query.order !== undefined && query.order !== "asc" && query.order !== "desc") throw badRequest("Invalid 'order': must be 'asc' or 'desc'", "order");
  const listed = input.map((item, place) => ({ place, item: listedItem(item, responseId, place) }));
  const ordered = query.order === "asc" ? listed : listed.slice().reverse();
  const after = query.after === undefined ? undefined : listed.find((entry) => entry.item.id === query.after)?.place;
  if (query.after !== undefined && after === undefined) throw badRequest(`Invalid 'after': no input item '${query.after}' in this response`, "after");
  const direction = query.order === "asc" ? 1 : -1;
  const { items, hasMore } = cursorPage(ordered, { limit: query.limit, after }, (entry, place) => direction * (entry.place - place));
  const data = items.map((entry) => entry.item);
  return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}
