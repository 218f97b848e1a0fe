import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { badRequest, GatewayError, notFound } from "../../errors/gateway-error.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { IdentifierSchema, ModelIdSchema, NameSchema } from "../../lib/schemas.ts";
import { PermissionSchema } from "../../auth/permissions.ts";
import { tokenView } from "../../admin/views.ts";
import { parsePaging } from "../../admin/paging.ts";
import { createToken } from "../../accounts/create-token.ts";
import type { Kysely } from "kysely";
import type { Database, TokenRow } from "../../db/schema.ts";
import { isRealDate } from "../../lib/time.ts";

const ISO_TIME_MESSAGE = "must be an ISO 8601 time, e.g. 2026-12-31T00:00:00Z";
// valibot's isoTimestamp also takes forms Date.parse cannot read (a zone of hours only, +05):
// those must be refused, not stored as a NaN that the database keeps as "never expires".
const IsoTime = v.pipe(
  v.string("must be an ISO 8601 time"),
  v.isoTimestamp(ISO_TIME_MESSAGE),
  v.check((text) => isRealDate(text.slice(0, 10)), "is not a calendar date"),
  v.transform((text) => Date.parse(text)),
  v.check((ms) => Number.isFinite(ms), ISO_TIME_MESSAGE),
);
const ROLE_MESSAGE = "must be 'user' or 'management'";
const Permissions = v.pipe(v.array(PermissionSchema, "must be an array of permissions"), v.transform((p) => [...new Set(p)]));
const Models = v.nullable(v.array(ModelIdSchema));
const Limit = v.nullable(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0)));

const CreateTokenSchema = v.strictObject({
  user_id: IdentifierSchema,
  name: NameSchema,
  permissions: v.optional(Permissions),
  // Spec 5.3 writes the role `Management`: it is read in upper or lower case, and stored lower-case.
  role: v.optional(v.pipe(v.string(ROLE_MESSAGE), v.toLowerCase(), v.picklist(["user", "management"], ROLE_MESSAGE)), "user"),
  expires_at: v.optional(v.nullable(IsoTime)),
  models: v.optional(Models),
  requests_per_minute: v.optional(Limit),
  tokens_per_minute: v.optional(Limit),
});

const UpdateTokenSchema = v.strictObject({
  name: v.optional(NameSchema),
  permissions: v.optional(Permissions),
  status: v.optional(v.picklist(["active", "disabled"], "must be 'active' or 'disabled'")),
  expires_at: v.optional(v.nullable(IsoTime)),
  models: v.optional(Models),
  requests_per_minute: v.optional(Limit),
  tokens_per_minute: v.optional(Limit),
});

/** GET/POST /v1/admin/tokens (paged when asked), GET, PATCH and DELETE (revoke) one. */
export function adminTokenRoutes(services: Services) {
  const view = (row: TokenRow) => tokenView(row, services.now(), services.lastUsed.latest(row.id));
  // Takes the executor: a write reads the row inside its transaction, so a revoke by another
  // instance cannot land between the check and the write (a PATCH re-enabled a revoked key).
  const findToken = async (db: Kysely<Database>, id: string) => {
    const row = await db.selectFrom("tokens").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row) throw notFound(`No token with id '${id}'`);
    return row;
  };

  return new Hono<AppEnv>()
    .get("/tokens", async (c) => {
      let query = services.db.selectFrom("tokens");
      const userId = c.req.query("user_id");
      if (userId) query = query.where("user_id", "=", userId);
      const ordered = query.selectAll().orderBy("created_at").orderBy("id");
      // Spec 4.12 lists every token; a caller with many asks for pages, as for users and usage.
      if (c.req.query("page") === undefined && c.req.query("limit") === undefined) {
        return c.json({ tokens: (await ordered.execute()).map(view) });
      }
      const { page, limit, offset } = parsePaging((name) => c.req.query(name), 50, 200);
      const rows = await ordered.limit(limit).offset(offset).execute();
      const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      return c.json({ tokens: rows.map(view), total: Number(n), page, limit });
    })
    .get("/tokens/:id", async (c) => c.json(view(await findToken(services.db, c.req.param("id")))))
    .post("/tokens", async (c) => {
      const body = parseOrThrow(CreateTokenSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      const user = await services.db.selectFrom("users").select("id").where("id", "=", body.user_id).executeTakeFirst();
      if (!user) throw notFound(`No user with id '${body.user_id}'`);
      if (body.expires_at != null && body.expires_at <= services.now()) throw badRequest("Invalid 'expires_at': must be in the future");
      const { row, key } = await services.changes.commit((created: { row: TokenRow }) => ({ kind: "token", subject: created.row.id }), (trx) => createToken(trx, {
        userId: body.user_id,
        name: body.name,
        role: body.role,
        permissions: body.permissions,
        models: body.models,
        expiresAt: body.expires_at,
        requestsPerMinute: body.requests_per_minute,
        tokensPerMinute: body.tokens_per_minute,
        now: services.now(),
      }));
      return c.json({ ...view(row), key }, 201);
    })
    .patch("/tokens/:id", async (c) => {
      const body = parseOrThrow(UpdateTokenSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      const id = c.req.param("id");
      const changes: Partial<TokenRow> = {};
      if (body.name !== undefined) changes.name = body.name;
      if (body.permissions !== undefined) changes.permissions_json = JSON.stringify(body.permissions);
      if (body.status !== undefined) changes.status = body.status;
      if (body.expires_at !== undefined) changes.expires_at = body.expires_at;
      if (body.models !== undefined) changes.models_json = body.models === null ? null : JSON.stringify(body.models);
      if (body.requests_per_minute !== undefined) changes.requests_per_minute = body.requests_per_minute;
      if (body.tokens_per_minute !== undefined) changes.tokens_per_minute = body.tokens_per_minute;
      const row = await services.changes.commit({ kind: "token", subject: id }, async (trx) => {
        const existing = await findToken(trx, id);
        if (existing.status === "revoked") throw new GatewayError(409, "A revoked token cannot be changed");
        if (Object.keys(changes).length === 0) return existing;
        return trx.updateTable("tokens").set(changes).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
      });
      return c.json(view(row));
    })
    .delete("/tokens/:id", async (c) => {
      const id = c.req.param("id");
      const row = await services.changes.commit({ kind: "token", subject: id }, async (trx) => {
        await findToken(trx, id);
        return trx.updateTable("tokens").set({ status: "revoked" }).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
      });
      return c.json(view(row));
    });
}
