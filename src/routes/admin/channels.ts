import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { notFound } from "../../errors/gateway-error.ts";
import { integerInRange, parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, NameSchema, recordOf, withoutControlCharacters } from "../../lib/schemas.ts";
import { newId } from "../../lib/random-id.ts";
import { channelView } from "../../admin/views.ts";
import { channelFromRow, ChannelTypeSchema, type Channel } from "../../channels/channel.ts";
import type { Kysely } from "kysely";
import type { ChannelRow, Database } from "../../db/schema.ts";

/**
 * An upstream's root: the adapters append the API's path to it, so a query or fragment would
 * end up inside the path of every call (`...?v=1/chat/completions`).
 */
const BaseUrl = v.nullable(
  v.pipe(
    v.string(),
    withoutControlCharacters,
    v.url("must be a URL"),
    v.regex(/^https?:\/\//i, "must be an http(s) URL"),
    v.check((url) => !/[?#]/.test(url), "must not have a query or fragment: the API's path is appended to it"),
  ),
);

const channelFields = {
  name: NameSchema,
  base_url: v.optional(BaseUrl),
  api_key: v.optional(v.nullable(v.pipe(v.string(), withoutControlCharacters))),
  models: v.array(ModelIdSchema, "must be an array of model IDs"),
  // Bounded so they stay exact integers when sorted and summed (1e300 and 2^53+2 were stored).
  priority: v.optional(integerInRange(-1_000_000, 1_000_000), 0),
  weight: v.optional(integerInRange(0, 1_000_000), 1),
  model_map: v.optional(recordOf(ModelIdSchema, ModelIdSchema, "must map model IDs to upstream model IDs"), {}),
  status: v.optional(v.picklist(["active", "disabled"], "must be 'active' or 'disabled'"), "active"),
};

const CreateChannelSchema = v.strictObject({ ...channelFields, type: ChannelTypeSchema });
const UpdateChannelSchema = v.partial(v.strictObject({ ...channelFields, type: ChannelTypeSchema }));

/** GET/POST /v1/admin/channels, GET, PATCH and DELETE one. Secrets are stored, never shown. */
export function adminChannelRoutes(services: Services) {
  // Takes the executor: a write reads the row inside its transaction, so another instance's
  // edit or delete cannot land between the read and the write.
  const findChannel = async (db: Kysely<Database>, id: string) => {
    const row = await db.selectFrom("channels").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row) throw notFound(`No channel with id '${id}'`);
    return row;
  };
  // A channel the breaker is resting shows `cooling` wherever it is shown, not only in the list.
  const view = (channel: Channel) => channelView(channel, services.breaker.isCooling(channel.id));

  return new Hono<AppEnv>()
    .get("/channels", (c) => c.json({ channels: services.channels.all.map(view) }))
    .get("/channels/:id", async (c) => c.json(view(channelFromRow(await findChannel(services.db, c.req.param("id"))))))
    .post("/channels", async (c) => {
      const body = parseOrThrow(CreateChannelSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      const now = services.now();
      const row: ChannelRow = {
        id: newId("ch"),
        name: body.name,
        type: body.type,
        base_url: body.base_url ?? null,
        api_key: body.api_key ?? null,
        models_json: JSON.stringify(body.models),
        model_map_json: JSON.stringify(body.model_map),
        priority: body.priority,
        weight: body.weight,
        status: body.status,
        created_at: now,
        updated_at: now,
      };
      await services.changes.commit({ kind: "channel", subject: row.id }, (trx) => trx.insertInto("channels").values(row).execute());
      return c.json(channelView(channelFromRow(row)), 201);
    })
    .patch("/channels/:id", async (c) => {
      const body = parseOrThrow(UpdateChannelSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      const id = c.req.param("id");
      const changes: Partial<ChannelRow> = {};
      if (body.name !== undefined) changes.name = body.name;
      if (body.type !== undefined) changes.type = body.type;
      if (body.base_url !== undefined) changes.base_url = body.base_url;
      if (body.api_key !== undefined) changes.api_key = body.api_key;
      if (body.models !== undefined) changes.models_json = JSON.stringify(body.models);
      if (body.model_map !== undefined) changes.model_map_json = JSON.stringify(body.model_map);
      if (body.priority !== undefined) changes.priority = body.priority;
      if (body.weight !== undefined) changes.weight = body.weight;
      if (body.status !== undefined) changes.status = body.status;
      const row = await services.changes.commit({ kind: "channel", subject: id }, async (trx) => {
        const existing = await findChannel(trx, id);
        // Strictly later than the last edit, even within one millisecond: every instance takes a
        // new updated_at for an edit, which ends the channel's cool-down there.
        const updatedAt = Math.max(services.now(), existing.updated_at + 1);
        return trx.updateTable("channels").set({ ...changes, updated_at: updatedAt }).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
      });
      return c.json(view(channelFromRow(row)));
    })
    .delete("/channels/:id", async (c) => {
      const id = c.req.param("id");
      const existing = await services.changes.commit({ kind: "channel", subject: id }, async (trx) => {
        const row = await findChannel(trx, id);
        await trx.deleteFrom("channels").where("id", "=", id).execute();
        return row;
      });
      return c.json({ ...channelView(channelFromRow(existing)), deleted: true });
    });
}
