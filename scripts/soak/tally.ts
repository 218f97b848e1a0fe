import type { Outcome } from "./client.ts";
import { FAULTY_CHAT_MODELS } from "./world.ts";

/** What the client saw of one metered request (one that writes a usage row) with a request id. */
export interface SeenRequest {
  status: number;
  whole: boolean;
}

/** What the client saw of one account's metered requests. */
export interface AccountTally {
  /** By the x-request-id of each answer. */
  seen: Map<string, SeenRequest>;
  /** Metered requests that gave no request id: the client hung up before the head, or mid-upload. */
  unseen: number;
}

const isFaultyModel = (model: string | null): model is keyof typeof FAULTY_CHAT_MODELS => model !== null && Object.hasOwn(FAULTY_CHAT_MODELS, model);

/**
 * Why an outcome is wrong, or null when the soak explains it: a 5xx only from an upstream
 * that fails on purpose, a stream ended by an error only from the one that breaks, a 4xx on
 * a well-formed request only for funds (402) or rate (429), every bad body refused, no hang.
 */
export function unexplained(outcome: Outcome): string | null {
  const { call, status, ending } = outcome;
  const model = call.meteredModel;
  const bad = call.what.startsWith("bad: ");
  if (ending === "timeout") return "passed its timeout";
  if (ending === "cut off") return `the connection broke (status ${status ?? "none"})`;
  if (status === null) return null;
  if (status >= 500) return isFaultyModel(model) && (FAULTY_CHAT_MODELS[model] as readonly number[]).includes(status) ? null : `a ${status} no upstream failure explains`;
  if (bad) return status >= 400 ? null : `a bad body answered ${status}`;
  if (status >= 400) return status === 402 || status === 429 ? null : `a ${status} for a well-formed request`;
  if (ending === "not whole") return model === "soak-break" && call.streamed ? null : "a 2xx that is not a whole answer";
  return null;
}

/** Everything the clients saw, counted, and what the checks at the end compare with the database. */
export class Tally {
  requests = 0;
  /** "200 whole", "429 refused", "hung up early", ... */
  readonly outcomes = new Map<string, number>();
  /** Whole 2xx answers by what was asked ("anthropic stream tools", "transcriptions srt", ...): the mix's coverage. */
  readonly wholeByKind = new Map<string, number>();
  /** The first two outcomes of each label that is not a whole answer, to tell why they came. */
  readonly samples = new Map<string, string[]>();
  readonly byAccount = new Map<string, AccountTally>();
  readonly violations: string[] = [];

  record(outcome: Outcome): void {
    this.requests++;
    const label = outcome.status === null ? outcome.ending : `${outcome.status} ${outcome.ending}`;
    this.outcomes.set(label, (this.outcomes.get(label) ?? 0) + 1);
    const examples = this.samples.get(label) ?? [];
    if (outcome.ending !== "whole" && examples.length < 2) this.samples.set(label, [...examples, `${outcome.call.what} (${outcome.call.account?.name ?? "operator"}): ${outcome.sample.replace(/\s+/g, " ").slice(0, 160)}`]);
    if (outcome.ending === "whole") {
      const kind = outcome.call.what.split(" -> ")[0]!;
      this.wholeByKind.set(kind, (this.wholeByKind.get(kind) ?? 0) + 1);
    }
    const why = unexplained(outcome);
    if (why) this.violations.push(`${outcome.call.what} on instance ${outcome.instance}: ${why}; request ${outcome.requestId ?? "-"}: ${outcome.sample.replace(/\s+/g, " ").slice(0, 200)}`);
    const { account, meteredModel } = outcome.call;
    if (!account || meteredModel === null) return;
    let tally = this.byAccount.get(account.name);
    if (!tally) this.byAccount.set(account.name, (tally = { seen: new Map(), unseen: 0 }));
    if (outcome.requestId === null) tally.unseen++;
    else tally.seen.set(outcome.requestId, { status: outcome.status!, whole: outcome.ending === "whole" });
  }

  /** Outcomes by status, most frequent first. */
  summary(): string {
    return byCount(this.outcomes);
  }

  /** Whole answers by kind, most frequent first. */
  coverage(): string {
    return byCount(this.wholeByKind);
  }
}

function byCount(counts: Map<string, number>): string {
  return [...counts].sort(([, a], [, b]) => b - a).map(([label, n]) => `${label}: ${n}`).join(", ");
}
