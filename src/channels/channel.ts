import * as v from "valibot";
import type { ChannelRow } from "../db/schema.ts";

/** Upstream kinds: wire protocols, not vendors (a vendor is a base URL and key of a kind). */
export const CHANNEL_TYPES = ["openai", "anthropic", "gemini", "mock"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const ChannelTypeSchema = v.picklist(CHANNEL_TYPES, `must be one of ${CHANNEL_TYPES.join(", ")}`);

/** Each kind's public endpoint, used when a channel gives no base_url (DESIGN.md section 5). */
export const DEFAULT_BASE_URLS: Record<ChannelType, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
  mock: "mock://local",
};

/** A channel as routing uses it, parsed once when loaded. */
export interface Channel {
  id: string;
  name: string;
  type: ChannelType;
  baseUrl: string;
  apiKey: string | null;
  models: readonly string[];
  /** Public model ID -> the ID sent upstream. Keys are served too. */
  modelMap: Readonly<Record<string, string>>;
  priority: number;
  weight: number;
  status: ChannelRow["status"];
  createdAt: number;
}

/** Parses a stored row. */
export function channelFromRow(row: ChannelRow): Channel {
  const type = row.type as ChannelType;
  return {
    id: row.id,
    name: row.name,
    type,
    baseUrl: (row.base_url ?? DEFAULT_BASE_URLS[type]).replace(/\/+$/, ""),
    apiKey: row.api_key,
    models: JSON.parse(row.models_json) as string[],
    modelMap: JSON.parse(row.model_map_json) as Record<string, string>,
    priority: row.priority,
    weight: row.weight,
    status: row.status,
    createdAt: row.created_at,
  };
}

/** Every public model ID a channel serves. */
export function servedModels(channel: Channel): string[] {
  return [...new Set([...channel.models, ...Object.keys(channel.modelMap)])];
}

/** The model ID to send upstream for a public one. */
export function upstreamModelOf(channel: Channel, model: string): string {
  // Own keys only: a model named `constructor` or `toString` is not the map's inherited function.
  return Object.hasOwn(channel.modelMap, model) ? channel.modelMap[model]! : model;
}

/** Shows enough of a secret to recognise it, never enough to use it. */
export function maskSecret(secret: string | null): string | null {
  if (secret === null || secret === "") return null;
  // At most the last 4 characters, and none of a short secret, so a mask never helps guess it.
  return secret.length < 16 ? "****" : `****${secret.slice(-4)}`;
}
