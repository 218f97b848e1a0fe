import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { channelFromRow, servedModels, type Channel } from "./channel.ts";

/** Channels in memory, indexed by the model IDs they serve; reloaded on every change. */
export class ChannelRegistry {
  #all: Channel[] = [];
  #byModel = new Map<string, Channel[]>();
  /** Each channel's `updated_at` at the last load. */
  #revisions = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    /** Told of each channel an admin changed or removed since the last load, by this instance or another. */
    private readonly onEdited: (channelId: string) => void = () => {},
  ) {}

  /** Reads every channel from the database and rebuilds the model index. */
  async load(): Promise<void> {
    const rows = await this.db.selectFrom("channels").selectAll().orderBy("created_at").execute();
    const revisions = new Map(rows.map((row) => [row.id, row.updated_at]));
    for (const [id, updatedAt] of this.#revisions) if (revisions.get(id) !== updatedAt) this.onEdited(id);
    this.#revisions = revisions;
    this.#all = rows.map(channelFromRow);
    const byModel = new Map<string, Channel[]>();
    for (const channel of this.#all) {
      if (channel.status === "disabled") continue;
      for (const model of servedModels(channel)) {
        const list = byModel.get(model) ?? [];
        list.push(channel);
        byModel.set(model, list);
      }
    }
    for (const list of byModel.values()) list.sort((a, b) => b.priority - a.priority);
    this.#byModel = byModel;
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
