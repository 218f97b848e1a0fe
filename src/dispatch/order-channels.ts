import type { Channel } from "../channels/channel.ts";

/**
 * The order to try channels in: highest priority first; within one priority a weighted
 * random order (a channel with weight 3 leads three times as often as one with weight 1).
 */
export function orderChannels(channels: readonly Channel[], random: () => number = Math.random): Channel[] {
  const byPriority = new Map<number, Channel[]>();
  for (const channel of channels) {
    const group = byPriority.get(channel.priority) ?? [];
    group.push(channel);
    byPriority.set(channel.priority, group);
  }
  const ordered: Channel[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => b - a)) {
    const pool = [...byPriority.get(priority)!];
    while (pool.length > 0) {
      const total = pool.reduce((sum, c) => sum + Math.max(c.weight, 0), 0);
      let pick = 0;
      if (total > 0) {
        let ticket = random() * total;
        pick = pool.findIndex((c) => (ticket -= Math.max(c.weight, 0)) < 0);
        if (pick === -1) pick = pool.length - 1;
      }
      ordered.push(pool.splice(pick, 1)[0]!);
    }
  }
  return ordered;
}
