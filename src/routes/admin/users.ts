import * as v from "valibot";
import { Hono } from "hono";
import { sql, type Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { GatewayError, notFound } from "../../errors/gateway-error.ts";
import { parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { withoutControlCharacters } from "../../lib/schemas.ts";
import { newId } from "../../lib/random-id.ts";
import { writeTransaction } from "../../db/write-transaction.ts";
import { parsePaging } from "../../admin/paging.ts";
import { userView } from "../../admin/views.ts";
import { usdAmountSchema } from "../../admin/usd-schema.ts";
import { createUser } from "../../accounts/create-user.ts";

const Email = v.pipe(v.string("must be a string"), v.trim(), withoutControlCharacters, v.email("must be an email address"), v.maxLength(254));
const Plan = v.pipe(v.string(), v.regex(/^[a-z0-9_-]{1,32}$/, "must be a plan name (a-z, 0-9, _ or -)"));
const UserStatus = v.picklist(["active", "suspended"], "must be 'active' or 'suspended'");

/**
 * 409 when another user (not `exceptId`) has the email, in any letter case: mail systems
 * treat Alice@Example.com and alice@example.com as one address, so two accounts for it are
 * one person's two balances.
 */
async function assertEmailFree(trx: Kysely<Database>, email: string, exceptId?: string): Promise<void> {
  let query = trx.selectFrom("users").select("id").where(sql<string>`lower(email)`, "=", email.toLowerCase());
  if (exceptId !== undefined) query = query.where("id", "!=", exceptId);
  if (await query.executeTakeFirst()) throw new GatewayError(409, `A user with email '${email}' already exists`);
}

/** POST /v1/admin/users, GET list, GET/PATCH one. */
export function adminUserRoutes(services: Services) {
  const CreateUserSchema = v.strictObject({
    email: Email,
    balance: v.optional(usdAmountSchema({ allowZero: true, maxMicros: services.config.maxTopupMicros })),
    plan: v.optional(Plan),
    status: v.optional(UserStatus),
  });
  const UpdateUserSchema = v.strictObject({ email: v.optional(Email), plan: v.optional(Plan), status: v.optional(UserStatus) });

  // Takes the executor: inside a transaction the only connection is the transaction's.
  const findUser = async (db: typeof services.db, id: string) => {
    const user = await db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
    if (!user) throw notFound(`No user with id '${id}'`);
    return user;
  };

  return new Hono<AppEnv>()
    .get("/users", async (c) => {
      const { page, limit, offset } = parsePaging((n) => c.req.query(n), 20, 100);
      const [rows, count] = await Promise.all([
        services.db.selectFrom("users").selectAll().orderBy("created_at").orderBy("id").limit(limit).offset(offset).execute(),
        services.db.selectFrom("users").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
      ]);
      return c.json({ users: rows.map(userView), total: Number(count.n), page, limit });
    })
    .post("/users", async (c) => {
      const body = parseOrThrow(CreateUserSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      const user = await writeTransaction(services.db, async (trx) => {
        await assertEmailFree(trx, body.email);
        return createUser(trx, {
          id: newId("usr"),
          email: body.email,
          plan: body.plan ?? "free",
          status: body.status ?? "active",
          balanceMicros: body.balance ?? 0,
          now: services.now(),
        });
      });
      return c.json(userView(user), 201);
    })
    .get("/users/:id", async (c) => c.json(userView(await findUser(services.db, c.req.param("id")))))
    .patch("/users/:id", async (c) => {
      const body = parseOrThrow(UpdateUserSchema, await readJsonBody(c.req.raw, services.config.bodyTimeoutMs));
      const id = c.req.param("id");
      const user = await services.changes.commit({ kind: "user", subject: id }, async (trx) => {
        await findUser(trx, id);
        if (body.email !== undefined) await assertEmailFree(trx, body.email, id);
        return trx
          .updateTable("users")
          .set({ ...body, updated_at: services.now() })
          .where("id", "=", id)
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      return c.json(userView(user));
    });
}
