import type { Kysely } from "kysely";
import type { Config } from "./config.ts";
import type { Database } from "./db/schema.ts";
import { writeTransaction } from "./db/write-transaction.ts";
import { createUser } from "./accounts/create-user.ts";
import { createToken } from "./accounts/create-token.ts";
import { hashKey } from "./auth/api-keys.ts";
import { newId } from "./lib/random-id.ts";
import { announceChange } from "./state/change-feed.ts";

/** The token name that marks the key given in GATEWAY_MANAGEMENT_KEY. */
const ENV_KEY_NAME = "GATEWAY_MANAGEMENT_KEY";
const ADMIN_EMAIL = "admin@gateway.local";
/** Models the first-start `mock` channel serves. */
export const DEMO_MODELS = ["demo-chat", "demo-chat-mini", "demo-embed", "demo-rerank", "demo-image", "demo-tts", "demo-transcribe"];
const DEMO_BALANCE_MICROS = 10_000_000;

/** What the first start created, to be printed once. */
export interface FirstStart {
  generatedManagementKey?: string;
  demoApiKey?: string;
}

/**
 * Prepares the database at start: makes GATEWAY_MANAGEMENT_KEY valid (and retires a
 * previous one), and on an empty database creates the admin account, a management key
 * when none was given, and unless disabled the demo account, key and mock channel.
 * Returns what must be printed; null when the database was not new.
 */
export async function bootstrap(db: Kysely<Database>, config: Config, now: number): Promise<FirstStart | null> {
  return writeTransaction(db, async (trx) => {
    const anyUser = await trx.selectFrom("users").select("id").limit(1).executeTakeFirst();
    const firstStart = anyUser === undefined;
    let admin = await findAdmin(trx);
    if (!admin && firstStart) {
      admin = await createUser(trx, { id: newId("usr"), email: ADMIN_EMAIL, plan: "enterprise", status: "active", balanceMicros: 0, now });
    }
    if (config.managementKey && admin) {
      await installEnvManagementKey(trx, admin.id, config.managementKey, now);
      // Instances already running must drop a retired env key from their caches.
      await announceChange(trx);
    }
    if (!firstStart || !admin) return null;

    const result: FirstStart = {};
    if (!config.managementKey) {
      const { key } = await createToken(trx, { userId: admin.id, name: "first-start management key", role: "management", now });
      result.generatedManagementKey = key;
    }
    if (config.demo) {
      const demo = await createUser(trx, { id: newId("usr"), email: "demo@gateway.local", plan: "free", status: "active", balanceMicros: DEMO_BALANCE_MICROS, now });
      result.demoApiKey = (await createToken(trx, { userId: demo.id, name: "demo key", role: "user", now })).key;
      await trx
        .insertInto("channels")
        .values({
          id: newId("ch"),
          name: "demo mock",
          type: "mock",
          base_url: null,
          api_key: null,
          models_json: JSON.stringify(DEMO_MODELS),
          model_map_json: "{}",
          priority: 0,
          weight: 1,
          status: "active",
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
    return result;
  });
}

/**
 * The admin account: the owner of the first management key, which the first start made
 * with it. Not found by its email, which an operator may change: a new
 * GATEWAY_MANAGEMENT_KEY must still be installed after that.
 */
function findAdmin(trx: Kysely<Database>): Promise<{ id: string } | undefined> {
  return trx
    .selectFrom("tokens")
    .select("user_id as id")
    .where("role", "=", "management")
    .orderBy("created_at")
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
}

/** Ensures the env key is an active management token and earlier env keys are revoked. */
async function installEnvManagementKey(trx: Kysely<Database>, adminId: string, key: string, now: number): Promise<void> {
  const hash = hashKey(key);
  await trx.updateTable("tokens").set({ status: "revoked" }).where("name", "=", ENV_KEY_NAME).where("key_hash", "!=", hash).execute();
  const existing = await trx.selectFrom("tokens").select("id").where("key_hash", "=", hash).executeTakeFirst();
  if (existing) {
    await trx.updateTable("tokens").set({ status: "active", role: "management" }).where("id", "=", existing.id).execute();
  } else {
    await createToken(trx, { userId: adminId, name: ENV_KEY_NAME, role: "management", key, now });
  }
}
