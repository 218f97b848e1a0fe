import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { channelFromRow, servedModels, type Channel } from "./channel.ts";

/** The listing's order: oldest first, as created. */
function byCreation(a: Channel, b: Channel): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A model's candidates: highest priority first, then oldest first. */
function byPriority(a: Channel, b: Channel): number {
  return b.priority - a.priority || byCreation(a, b);
}

/** Where `channel` goes in `sorted` (by creation): the index of the first channel not before it. */
function placeOf(sorted: readonly Channel[], channel: Channel): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (byCreation(sorted[middle]!, channel) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * `byModel` with these channels, unless disabled, added to the lists of the models they
 * serve. Each list they join is replaced by a new sorted array, never changed in place: a
 * request may still be going through the old one.
 */
function withChannels(byModel: Map<string, readonly Channel[]>, channels: readonly Channel[]): Map<string, readonly Channel[]> {
  const grown = new Map<string, Channel[]>();
  for (const channel of channels) {
    if (channel.status === "disabled") continue;
    for (const model of servedModels(channel)) {
      let list = grown.get(model);
      if (!list) grown.set(model, (list = [...(byModel.get(model) ?? [])]));
      list.push(channel);
    }
  }
  for (const [model, list] of grown) byModel.set(model, list.sort(byPriority));
  return byModel;
}

/** Channels in memory, indexed by the model IDs they serve; reloaded on every change. */
export class ChannelRegistry {
  #all: readonly Channel[] = [];
  #byId = new Map<string, Channel>();
  #byModel = new Map<string, readonly Channel[]>();
  /** Each channel's `updated_at` at the last load. */
  #revisions = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    /** Told of each channel an admin changed or removed since the last load, by this instance or another. */
    private readonly onEdited: (channelId: string) => void = () => {},
  ) {}

  /** Reads every channel from the database and rebuilds the model index. */
  async load(): Promise<void> {
    const rows = await this.db.selectFrom("channels").selectAll().execute();
    const revisions = new Map(rows.map((row) => [row.id, row.updated_at]));
    for (const [id, updatedAt] of this.#revisions) if (revisions.get(id) !== updatedAt) this.onEdited(id);
    this.#revisions = revisions;
    this.#all = rows.map(channelFromRow).sort(byCreation);
    this.#byId = new Map(this.#all.map((channel) => [channel.id, channel]));
    this.#byModel = withChannels(new Map(), this.#all);
  }

  /**
   * Reads the channels with these IDs again (one removed is dropped): what admin changes
   * name. Only the model lists they were or are in are rebuilt, and the listing is spliced,
   * so a change costs the rows it touched, not the table (a full load took 15 ms with 5,000
   * channels, and rebuilding the index from memory 1.5 ms).
   */
  async reload(ids: readonly string[]): Promise<void> {
    const rows = await this.db.selectFrom("channels").selectAll().where("id", "in", ids).execute();
    for (const id of ids) {
      const updatedAt = rows.find((row) => row.id === id)?.updated_at;
      if (this.#revisions.has(id) && this.#revisions.get(id) !== updatedAt) this.onEdited(id);
      if (updatedAt === undefined) this.#revisions.delete(id);
      else this.#revisions.set(id, updatedAt);
    }
    const named = new Set(ids);
    const stale = ids.flatMap((id) => this.#byId.get(id) ?? []);
    const fresh = rows.map(channelFromRow);
    for (const model of new Set(stale.flatMap(servedModels))) {
      // A disabled channel is in no list.
      const kept = this.#byModel.get(model)?.filter((channel) => !named.has(channel.id)) ?? [];
      if (kept.length > 0) this.#byModel.set(model, kept);
      else this.#byModel.delete(model);
    }
    withChannels(this.#byModel, fresh);
    const all = this.#all.slice();
    for (const channel of stale) all.splice(placeOf(all, channel), 1);
    for (const channel of fresh) all.splice(placeOf(all, channel), 0, channel);
    this.#all = all;
    for (const channel of stale) this.#byId.delete(channel.id);
    for (const channel of fresh) this.#byId.set(channel.id, channel);
  }

  /** Every channel, disabled ones included. */
  get all(): readonly Channel[] {
    return this.#all;
  }

  /** Channels not disabled by an admin that serve `model`, highest priority first. */
  candidatesFor(model: string): readonly Channel[] {
    return this.#byModel.get(model) ?? [];
  }

  /** Every model ID some enabled channel serves. */
  get models(): IterableIterator<string> {
    return this.#byModel.keys();
  }
}
