import type { Database as SqliteReader } from "bun:sqlite";
import { openReadOnly, runDoctorCli, waitFor } from "../../test/billing/_support.ts";
import type { Fleet } from "./fleet.ts";
import type { Observations } from "./observations.ts";
import { CHAT_MODELS, CHAT_PRICES, type Account } from "./world.ts";

/** What one check found: how many facts it held to an invariant, and those that broke one. */
export interface CheckOutcome {
  checked: number;
  violations: string[];
}

/**
 * Holds the database, with traffic stopped, to what the soak promises (see scripts/chaos-billing.ts):
 * instances, holds and leases; every whole success has its usage row; each request charged
 * once; each account's books; top-ups; the prices each instance serves; the doctor.
 */
export async function checkInvariants(dir: string, fleet: Fleet, observations: Observations, accounts: readonly Account[]): Promise<CheckOutcome> {
  const outcome: CheckOutcome = { checked: 0, violations: [] };
  const expect = (ok: boolean, violation: () => string) => {
    outcome.checked++;
    if (!ok) outcome.violations.push(violation());
  };
  // Hung-up clients' requests settle as their upstream calls end: give them a moment.
  await waitFor("every hold settled", () => count(dir, "select count(*) as n from holds") === 0, 10_000).catch(() => {});
  const db = openReadOnly(dir);
  try {
    checkInstances(db, fleet, expect);
    checkRequests(db, observations, expect);
    checkAccounts(db, accounts, expect);
    checkTopUps(db, observations, expect);
    checkCosts(db, observations, expect);
  } finally {
    db.close();
  }
  await checkServedPrices(dir, fleet, expect);
  for (const error of observations.serverErrors.splice(0)) expect(false, () => `a 500: ${error}`);
  for (const exit of fleet.unexpectedExits.splice(0)) expect(false, () => exit);
  const doctor = await runDoctorCli(dir, 30_000);
  expect(doctor.code === 0 && /\b0 ledger mismatches\b/.test(doctor.stdout), () => `doctor: ${doctor.stdout.trim()}`);
  return outcome;
}

type Expect = (ok: boolean, violation: () => string) => void;

function count(dir: string, query: string): number {
  const db = openReadOnly(dir);
  try {
    return (db.query(query).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Only live instances have a record, holds or leases: a live instance's registry pass released the dead ones'. */
function checkInstances(db: SqliteReader, fleet: Fleet, expect: Expect): void {
  const livePids = new Set(fleet.live.map((gw) => gw.pid));
  const instances = db.query("select id, pid from instances").all() as { id: string; pid: number }[];
  for (const i of instances) expect(livePids.has(i.pid), () => `instance record of dead pid ${i.pid} remains`);
  expect(instances.length === livePids.size, () => `${instances.length} instance records for ${livePids.size} live instances`);
  const liveIds = new Set(instances.filter((i) => livePids.has(i.pid)).map((i) => i.id));
  const holds = db.query("select id, instance_id, amount_micros from holds").all() as { id: string; instance_id: string; amount_micros: number }[];
  for (const h of holds) expect(false, () => `hold ${h.id} of ${h.amount_micros} micro-USD still open (instance ${h.instance_id}, ${liveIds.has(h.instance_id) ? "live" : "dead"}) with no request in flight`);
  const leases = db.query("select user_id, instance_id from balance_leases").all() as { user_id: string; instance_id: string }[];
  for (const l of leases) expect(liveIds.has(l.instance_id), () => `lease of dead instance ${l.instance_id} on ${l.user_id} remains`);
}

/** Every whole success has one usage row of status 200; each request is charged once: its ledger rows add up to minus its cost. */
function checkRequests(db: SqliteReader, observations: Observations, expect: Expect): void {
  const usage = new Map<string, { n: number; status: number; cost: number }>();
  for (const row of db.query("select request_id, count(*) as n, max(status) as status, sum(cost_micros) as cost from usage_logs group by request_id").all() as { request_id: string; n: number; status: number; cost: number }[]) {
    usage.set(row.request_id, row);
    expect(row.n === 1, () => `request ${row.request_id} has ${row.n} usage rows`);
  }
  for (const seen of observations.completed) {
    const row = usage.get(seen.requestId);
    expect(row !== undefined && row.status === 200, () => `whole success ${seen.requestId} (${seen.what}) has ${row ? `a usage row of status ${row.status}` : "no usage row"}`);
  }
  const refs = db.query("select reference, sum(amount_micros) as net, group_concat(kind) as kinds from ledger where kind != 'topup' group by reference").all() as { reference: string; net: number; kinds: string }[];
  for (const ref of refs) {
    const cost = usage.get(ref.reference)?.cost ?? 0;
    const kinds = ref.kinds.split(",");
    const times = (kind: string) => kinds.filter((k) => k === kind).length;
    expect(ref.net === -cost, () => `request ${ref.reference} moved ${ref.net} micro-USD for a cost of ${cost} (${ref.kinds})`);
    expect(times("hold") <= 1 && times("settle") <= 1 && times("refund") <= 2, () => `request ${ref.reference} has ledger rows ${ref.kinds}`);
  }
}

/**
 * Each account: balance = its top-ups - the costs of its usage rows, total spent = those
 * costs, and after every ledger row (in the order written) the balance below zero by no more
 * than what the requests settled so far cost beyond their holds: the documented overdraft.
 */
function checkAccounts(db: SqliteReader, accounts: readonly Account[], expect: Expect): void {
  for (const account of accounts) {
    const user = db.query("select balance_micros as balance, total_spent_micros as spent from users where id = ?").get(account.userId) as { balance: number; spent: number };
    const topUps = (db.query("select coalesce(sum(amount_micros), 0) as n from ledger where user_id = ? and kind = 'topup'").get(account.userId) as { n: number }).n;
    const costs = (db.query("select coalesce(sum(cost_micros), 0) as n from usage_logs where user_id = ?").get(account.userId) as { n: number }).n;
    expect(user.balance === topUps - costs, () => `${account.name}: balance ${user.balance} != top-ups ${topUps} - costs ${costs}`);
    expect(user.spent === costs, () => `${account.name}: total spent ${user.spent} != costs ${costs}`);
    // A settlement that took more than its hold (or whose hold a crash refunded) is the documented overdraft.
    const worst = db
      .query(
        `select balance_after_micros as balance, excess from (
           select rowid, balance_after_micros, sum(case when kind = 'settle' and amount_micros < 0 then -amount_micros else 0 end)
             over (order by rowid rows unbounded preceding) as excess
           from ledger where user_id = ?)
         order by balance_after_micros + excess limit 1`,
      )
      .get(account.userId) as { balance: number; excess: number } | null;
    if (worst) expect(worst.balance >= -worst.excess, () => `${account.name}: balance went to ${worst.balance}, below the overdraft bound -${worst.excess} of the settlements before`);
  }
}

/** Each top-up is credited at most once; one that any instance answered with 200, exactly once, under the transaction id it answered. */
function checkTopUps(db: SqliteReader, observations: Observations, expect: Expect): void {
  const rows = db.query("select user_id, amount_micros, reference from ledger where kind = 'topup' and reference != 'opening balance'").all() as { user_id: string; amount_micros: number; reference: string }[];
  const credited = new Map<string, string[]>();
  for (const row of rows) {
    const key = `${row.user_id}/${row.amount_micros}`;
    credited.set(key, [...(credited.get(key) ?? []), row.reference]);
  }
  for (const attempt of observations.topUps) {
    const references = credited.get(`${attempt.userId}/${attempt.amountMicros}`) ?? [];
    const answered = [...new Set(attempt.answers.flatMap((a) => (a.transactionId ? [a.transactionId] : [])))];
    expect(references.length <= 1, () => `top-up ${attempt.seq} (key ${attempt.idempotencyKey}) credited ${references.length} times`);
    if (answered.length > 0) {
      expect(answered.length === 1 && references.length === 1 && references[0] === answered[0], () => `top-up ${attempt.seq} (key ${attempt.idempotencyKey}) answered ${answered.join(", ")} but the ledger has ${references.join(", ") || "nothing"}`);
    }
  }
}

/** Each chat usage row costs its tokens at one of the prices its model ever had. */
function checkCosts(db: SqliteReader, observations: Observations, expect: Expect): void {
  const placeholders = CHAT_MODELS.map(() => "?").join(", ");
  const rows = db.query(`select request_id, model, prompt_tokens, completion_tokens, cost_micros from usage_logs where model in (${placeholders}) and cost_micros > 0`).all(...CHAT_MODELS) as { request_id: string; model: string; prompt_tokens: number; completion_tokens: number; cost_micros: number }[];
  for (const row of rows) {
    const prices = [...(observations.priceHistory.get(row.model) ?? []), `${CHAT_PRICES[0].input_per_million}/${CHAT_PRICES[0].output_per_million}`];
    const fits = prices.some((p) => {
      const [input, output] = p.split("/").map(Number);
      return row.prompt_tokens * input! + row.completion_tokens * output! === row.cost_micros;
    });
    expect(fits, () => `request ${row.request_id} on ${row.model} cost ${row.cost_micros} for ${row.prompt_tokens}+${row.completion_tokens} tokens, at no price the model had`);
  }
}

/** Every live instance serves the prices the database holds (it reloaded each change, its own or another's). */
async function checkServedPrices(dir: string, fleet: Fleet, expect: Expect): Promise<void> {
  const db = openReadOnly(dir);
  let stored: Map<string, string>;
  try {
    const rows = db.query("select model, input_per_million_micros as i, output_per_million_micros as o from prices").all() as { model: string; i: number; o: number }[];
    stored = new Map(rows.map((r) => [r.model, `${r.i / 1e6}/${r.o / 1e6}`]));
  } finally {
    db.close();
  }
  for (const gw of fleet.live) {
    const served = await gw.admin("GET", "/v1/admin/prices");
    for (const model of CHAT_MODELS) {
      const price = served.body.prices.find((p: any) => p.model === model);
      const shown = `${price?.input_per_million}/${price?.output_per_million}`;
      expect(shown === stored.get(model), () => `pid ${gw.pid} serves ${model} at ${shown}, the database has ${stored.get(model)}`);
    }
  }
}
