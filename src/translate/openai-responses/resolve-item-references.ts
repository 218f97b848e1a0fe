import { badRequest } from "../../errors/gateway-error.ts";
import type { OutputItem } from "./convert-response.ts";
import { WHY_NOT_KEPT } from "./continue-conversation.ts";
import type { InputItem, ItemReference, ResponsesRequest } from "./request-schema.ts";

/**
 * A request's `input` with each item_reference replaced by the item `recall` finds for its
 * id; one that names no item it finds is a 400 naming the reference, as OpenAI answers for
 * an item it did not store.
 */
export function resolveItemReferences(input: ResponsesRequest["input"], recall: (id: string) => OutputItem | undefined): string | InputItem[] {
  if (typeof input === "string") return input;
  return input.map((item, i) => (item.type === "item_reference" ? recalled(item, i, recall) : item));
}

function recalled(reference: ItemReference, i: number, recall: (id: string) => OutputItem | undefined): InputItem {
  const item = recall(reference.id);
  if (item) return item;
  throw badRequest(
    `Invalid 'input[${i}]': no item '${reference.id}' is kept for this item_reference. ${WHY_NOT_KEPT}, with its output items. Send the item itself`,
    `input[${i}]`,
  );
}
