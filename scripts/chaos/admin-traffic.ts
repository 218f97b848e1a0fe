import type { GatewayProcess } from "../../test/billing/_support.ts";
import { PROCESS_MANAGEMENT_KEY } from "../../test/billing/_support.ts";
import { sleep } from "../../test/helpers/common.ts";
import type { Fleet } from "./fleet.ts";
import type { Observations, TopUpAttempt } from "./observations.ts";
import type { Random } from "./random.ts";
import { CHAT_MODELS, CHAT_PRICES, type Account } from "./world.ts";

/**
 * The operator's side of the soak: top-ups (most with an Idempotency-Key, some sent again
 * with the same key to another instance, at once or after the first answer) and chat price
 * changes, while the traffic flows. Each top-up has an amount no other has, so its ledger row
 * can be told apart.
 */
export class Operator {
  #seq = 0;

  constructor(
    private readonly fleet: Fleet,
    private readonly accounts: readonly Account[],
    private readonly random: Random,
    private readonly observations: Observations,
    /** Tells top-ups of one soak from those of another run on the same database (never the case, but cheap). */
    private readonly runTag: string,
  ) {}

  /** Top-ups and price changes every 100-400 ms until `stop()`. */
  async run(stop: () => boolean): Promise<void> {
    while (!stop()) {
      const gw = this.fleet.pick(this.random);
      if (gw) await (this.random.chance(0.6) ? this.topUp(gw) : this.changePrice(gw));
      await sleep(this.random.int(100, 400));
    }
  }

  /** A top-up sent to `gw` (and, for some with a key, again to another instance); resolves when every attempt is answered or lost. */
  async topUp(gw: GatewayProcess): Promise<void> {
    const seq = ++this.#seq;
    const poor = this.accounts.filter((a) => a.poor);
    const account = this.random.chance(0.7) ? this.random.pick(poor) : this.random.pick(this.accounts);
    // 0.01 USD and up, unique to this top-up.
    const amountMicros = 10_000 + seq;
    const withKey = this.random.chance(0.7);
    const attempt: TopUpAttempt = { seq, userId: account.userId, amountMicros, idempotencyKey: withKey ? `chaos-${this.runTag}-${seq}` : null, answers: [] };
    this.observations.topUps.push(attempt);
    const send = (to: GatewayProcess) => this.#sendTopUp(to, attempt);
    const first = send(gw);
    if (!withKey || !this.random.chance(0.5)) return first;
    const other = this.fleet.pick(this.random) ?? gw;
    // The same key again: at once (the two race), or once the first is answered or lost.
    if (this.random.chance(0.5)) await Promise.all([first, send(other)]);
    else await first.then(() => send(this.fleet.pick(this.random) ?? other));
  }

  /** Posts a new price for a random chat model; the price counts as possible from the moment it is sent. */
  async changePrice(gw: GatewayProcess): Promise<void> {
    const model = this.random.pick(CHAT_MODELS);
    const price = this.random.pick(CHAT_PRICES);
    this.observations.notePrice(model, price);
    this.observations.priceChanges++;
    try {
      const answer = await gw.admin("POST", "/v1/admin/prices", { model, ...price });
      this.observations.status(answer.status, `price change on pid ${gw.pid}`, JSON.stringify(answer.body));
    } catch {
      this.observations.count("admin connection lost");
    }
  }

  async #sendTopUp(gw: GatewayProcess, attempt: TopUpAttempt): Promise<void> {
    const headers: Record<string, string> = { authorization: `Bearer ${PROCESS_MANAGEMENT_KEY}`, "content-type": "application/json" };
    if (attempt.idempotencyKey) headers["idempotency-key"] = attempt.idempotencyKey;
    try {
      const response = await gw.fetch("/v1/admin/topup", { method: "POST", headers, body: JSON.stringify({ user_id: attempt.userId, amount: attempt.amountMicros / 1e6 }) });
      const text = await response.text();
      this.observations.status(response.status, `top-up on pid ${gw.pid}`, text);
      attempt.answers.push({ status: response.status, transactionId: response.status === 200 ? JSON.parse(text).transaction_id : undefined });
    } catch {
      this.observations.count("admin connection lost");
      attempt.answers.push({ status: "lost" });
    }
  }
}
