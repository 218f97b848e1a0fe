import { sha256Hex } from "../lib/sha256.ts";
import { randomBase62 } from "../lib/random-id.ts";

/** Prefix of keys for the model endpoints. */
export const API_KEY_PREFIX = "sk-gw-";
/** Prefix of management keys, for /v1/admin/*. */
export const MANAGEMENT_KEY_PREFIX = "mk-gw-";

/** The role a key's prefix announces. */
export type KeyRole = "user" | "management";

/** A fresh plaintext key of a role: shown once, stored only as its hash. */
export function generateKey(role: KeyRole): string {
  return (role === "management" ? MANAGEMENT_KEY_PREFIX : API_KEY_PREFIX) + randomBase62(40);
}

/** The part of a key safe to display: its prefix and the first characters of the secret. */
export function displayPrefixOf(key: string): string {
  return key.slice(0, 12);
}

/** Hex SHA-256 of a key: what the database stores and the cache is keyed by. */
export function hashKey(key: string): string {
  return sha256Hex(key);
}
