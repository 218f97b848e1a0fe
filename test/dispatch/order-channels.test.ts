import { expect, test } from "bun:test";
import type { Channel } from "../../src/channels/channel.ts";
import { orderChannels } from "../../src/dispatch/order-channels.ts";
import { seededRandom } from "../helpers/common.ts";

/** Routing order: priority first, then a weighted random order within a priority. */

const channel = (id: string, weight: number, priority = 0): Channel => ({
  id, name: id, type: "openai", baseUrl: "http://127.0.0.1:9", apiKey: null, models: ["m"], modelMap: {}, priority, weight, status: "active", createdAt: 0,
});

test("within a priority, a channel leads in proportion to its weight; a lower priority always comes after", () => {
  const random = seededRandom(7);
  const channels = [channel("light", 1, 5), channel("heavy", 3, 5), channel("backup", 10, 0)];
  const leads: Record<string, number> = { light: 0, heavy: 0, backup: 0 };
  for (let i = 0; i < 3_000; i++) {
    const order = orderChannels(channels, random).map((c) => c.id);
    expect(order.at(-1)).toBe("backup");
    leads[order[0]!]!++;
  }
  // Expected 750 and 2250; the bound is some 8 standard deviations wide.
  expect(leads.light).toBeGreaterThan(570);
  expect(leads.light).toBeLessThan(930);
  expect(leads.backup).toBe(0);
});

test("a channel of weight 0 is tried only after the weighted ones of its priority, before a lower priority", () => {
  const random = seededRandom(11);
  for (let i = 0; i < 200; i++) {
    const order = orderChannels([channel("spare", 0, 1), channel("a", 1, 1), channel("b", 2, 1), channel("lower", 1, 0)], random).map((c) => c.id);
    expect(order.slice(2)).toEqual(["spare", "lower"]);
  }
});
