import { Hono, type Context } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { badRequest, notFound } from "../../errors/gateway-error.ts";
import { positiveInteger } from "../../admin/paging.ts";
import type { KeptResponse } from "../../state/kept-responses.ts";
import { WHY_NOT_KEPT } from "../../translate/openai-responses/continue-conversation.ts";
import { INPUT_ITEMS_PAGE, inputItemsPage } from "./input-items-page.ts";

/** The 404 of an id not kept for the caller: the same for another user's, so an id says nothing of theirs. */
function notKept(id: string) {
  return notFound(`No response with id '${id}' is kept here. ${WHY_NOT_KEPT}`);
}

/** The Response the path names, kept for the caller, or the 404. */
function keptOf(c: Context<AppEnv>, services: Services): KeptResponse {
  const id = c.req.param("id")!;
  const kept = services.keptResponses.recall(c.get("principal").userId, id);
  if (!kept) throw notKept(id);
  return kept;
}

/**
 * The Responses the gateway keeps (src/state/kept-responses.ts), as the openai SDK reaches
 * OpenAI's stored ones: GET /v1/responses/{id} (`responses.retrieve`), DELETE
 * (`responses.delete`) and GET /v1/responses/{id}/input_items (`responses.inputItems.list`),
 * each for the key's user alone, with the chat permission that made them.
 */
export function keptResponsesRoutes(services: Services) {
  const chatKey = requireApiKey(services, "chat");
  return new Hono<AppEnv>()
    .get("/v1/responses/:id", chatKey, (c) => {
      const kept = keptOf(c, services);
      // OpenAI replays a background Response's events; the gateway keeps the Response, not its events.
      if (c.req.query("stream") === "true") throw badRequest("Invalid 'stream': a kept Response's events are not kept, so it cannot be streamed again; retrieve it without stream", "stream");
      return c.json(kept.response);
    })
    .delete("/v1/responses/:id", chatKey, async (c) => {
      const id = c.req.param("id");
      if (!(await services.keptResponses.forget(c.get("principal").userId, id))) throw notKept(id);
      return c.json({ id, object: "response", deleted: true });
    })
    .get("/v1/responses/:id/input_items", chatKey, (c) => {
      const kept = keptOf(c, services);
      const query = {
        limit: positiveInteger("limit", c.req.query("limit"), INPUT_ITEMS_PAGE.fallback, INPUT_ITEMS_PAGE.max),
        order: c.req.query("order") || undefined,
        after: c.req.query("after") || undefined,
      };
      return c.json(inputItemsPage(kept.input, kept.response.id, query));
    });
}
