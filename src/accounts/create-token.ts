import type { Kysely } from "kysely";
import type { Database, TokenRow } from "../db/schema.ts";
import { displayPrefixOf, generateKey, hashKey } from "../auth/api-keys.ts";
import { PERMISSIONS, type Permission } from "../auth/permissions.ts";
import { newId } from "../lib/random-id.ts";

interface NewToken {
  userId: string;
  name: string;
  role: TokenRow["role"];
  permissions?: Permission[];
  models?: string[] | null;
  expiresAt?: number | null;
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
  /** A key chosen by the operator (GATEWAY_MANAGEMENT_KEY); otherwise one is generated. */
  key?: string;
  now: number;
}

/** Creates a token; returns its row and the plaintext key, which is never stored. */
export async function createToken(db: Kysely<Database>, token: NewToken): Promise<{ row: TokenRow; key: string }> {
  const key = token.key ?? generateKey(token.role);
  const row: TokenRow = {
    id: newId("tok"),
    user_id: token.userId,
    name: token.name,
    role: token.role,
    key_hash: hashKey(key),
    key_prefix: displayPrefixOf(key),
    permissions_json: JSON.stringify(token.permissions ?? (token.role === "user" ? [...PERMISSIONS] : [])),
    models_json: token.models ? JSON.stringify(token.models) : null,
    status: "active",
    expires_at: token.expiresAt ?? null,
    created_at: token.now,
    last_used: null,
    requests_per_minute: token.requestsPerMinute ?? null,
    tokens_per_minute: token.tokensPerMinute ?? null,
  };
  await db.insertInto("tokens").values(row).execute();
  return { row, key };
}
