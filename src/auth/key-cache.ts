import type { Kysely } from "kysely";
import type { Database, TokenRow, UserRow } from "../db/schema.ts";
import type { Permission } from "./permissions.ts";
import { hashKey } from "./api-keys.ts";

/** A key as the request path sees it: its token and the owning account, from memory. */
export interface Principal {
  tokenId: string;
  role: TokenRow["role"];
  tokenStatus: TokenRow["status"];
  expiresAt: number | null;
  permissions: ReadonlySet<Permission>;
  /** null: every model the gateway serves. */
  models: ReadonlySet<string> | null;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  userId: string;
  userStatus: UserRow["status"];
  plan: string;
}

/** Unknown keys remembered at most; past it the negative entries are dropped, not the known ones. */
const MAX_NEGATIVE_ENTRIES = 10_000;

/**
 * Resolves presented keys to principals. Served from memory: a database read happens on
 * the first sight of a key and after `clear()`, which every change to a token or user calls.
 */
export class KeyCache {
  #known = new Map<string, Principal>();
  #unknown = new Set<string>();
  /** Bumped by clear() and forget(): a load that started before it must not repopulate stale data. */
  #generation = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** The principal for a plaintext key, or null for a key the gateway never issued. */
  async resolve(key: string): Promise<Principal | null> {
    const hash = hashKey(key);
    const cached = this.#known.get(hash);
    if (cached) return cached;
    if (this.#unknown.has(hash)) return null;
    const generation = this.#generation;
    const principal = await this.#load(hash);
    if (generation === this.#generation) {
      if (principal) this.#known.set(hash, principal);
      else {
        if (this.#unknown.size >= MAX_NEGATIVE_ENTRIES) this.#unknown.clear();
        this.#unknown.add(hash);
      }
    }
    return principal;
  }

  /** Forgets everything: the next request of each key reads the database again. */
  clear(): void {
    this.#known.clear();
    this.#unknown.clear();
    this.#generation++;
  }

  /** Forgets the keys of these tokens, or of every token of these users: what an admin change to them names. */
  forget(ids: { tokens?: readonly string[]; users?: readonly string[] }): void {
    const tokens = new Set(ids.tokens);
    const users = new Set(ids.users);
    for (const [hash, principal] of this.#known) {
      if (tokens.has(principal.tokenId) || users.has(principal.userId)) this.#known.delete(hash);
    }
    // A load already under way may have read the row as it was before the change.
    this.#generation++;
  }

  async #load(hash: string): Promise<Principal | null> {
    const row = await this.db
      .selectFrom("tokens")
      .innerJoin("users", "users.id", "tokens.user_id")
      .select([
        "tokens.id as token_id",
        "tokens.role",
        "tokens.status as token_status",
        "tokens.expires_at",
        "tokens.permissions_json",
        "tokens.models_json",
        "tokens.requests_per_minute",
        "tokens.tokens_per_minute",
        "users.id as user_id",
        "users.status as user_status",
        "users.plan",
      ])
      .where("tokens.key_hash", "=", hash)
      .executeTakeFirst();
    if (!row) return null;
    return {
      tokenId: row.token_id,
      role: row.role,
      tokenStatus: row.token_status,
      expiresAt: row.expires_at,
      permissions: new Set(JSON.parse(row.permissions_json) as Permission[]),
      models: row.models_json === null ? null : new Set(JSON.parse(row.models_json) as string[]),
      requestsPerMinute: row.requests_per_minute,
      tokensPerMinute: row.tokens_per_minute,
      userId: row.user_id,
      userStatus: row.user_status,
      plan: row.plan,
    };
  }
}
