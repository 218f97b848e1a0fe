import type { KeyCache } from "../auth/key-cache.ts";
import type { ChannelRegistry } from "../channels/channel-registry.ts";
import type { PriceStore } from "../pricing/price-store.ts";
import type { SettingsStore } from "../settings/settings-store.ts";
import type { Change } from "./change-feed.ts";

/** The in-memory state admin changes reach. */
export interface ChangeTargets {
  keys: KeyCache;
  channels: ChannelRegistry;
  prices: PriceStore;
  settings: SettingsStore;
  /** Reloads all of it: for a change that does not say what it touched. */
  reloadAll(): Promise<void>;
}

/** The subjects of the changes of one kind, each once. */
function subjectsOf(changes: readonly Change[], kind: "channel" | "token" | "user" | "price"): string[] {
  const subjects = new Set<string>();
  for (const change of changes) if (change.kind === kind && "subject" in change) subjects.add(change.subject);
  return [...subjects];
}

/** The kinds this version knows how to apply one by one. */
const TARGETED_KINDS = new Set<string>(["channel", "token", "user", "price", "settings"]);

/**
 * Reloads what `changes` name, each kind's subjects in one read, and nothing else. A kind
 * this version does not know (written by a newer instance sharing the database during an
 * upgrade) reloads everything, as `all` does: applied as nothing, its change would be missed.
 */
export async function applyChanges(targets: ChangeTargets, changes: readonly Change[]): Promise<void> {
  if (changes.some((change) => !TARGETED_KINDS.has(change.kind))) return targets.reloadAll();
  const tokens = subjectsOf(changes, "token");
  const users = subjectsOf(changes, "user");
  if (tokens.length > 0 || users.length > 0) targets.keys.forget({ tokens, users });
  const channels = subjectsOf(changes, "channel");
  const models = subjectsOf(changes, "price");
  await Promise.all([
    channels.length > 0 ? targets.channels.reload(channels) : undefined,
    models.length > 0 ? targets.prices.reload(models) : undefined,
    changes.some((change) => change.kind === "settings") ? targets.settings.load() : undefined,
  ]);
}
