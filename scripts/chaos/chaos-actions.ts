import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { GatewayProcess } from "../../test/billing/_support.ts";
import { sleep } from "../../test/helpers/common.ts";
import type { Fleet } from "./fleet.ts";
import type { Operator } from "./admin-traffic.ts";
import type { Random } from "./random.ts";
import type { TrafficHooks } from "./traffic.ts";

export interface ChaosPlan {
  fleet: Fleet;
  operator: Operator;
  random: Random;
  hooks: TrafficHooks;
  /** How many instances to keep running. */
  instances: number;
  /** When the cycle's chaos ends. */
  until: number;
  /** Whether to kill every instance at once, in the middle of the cycle. */
  killAll: boolean;
  /**
   * Early in the cycle, a stall: an instance stopped (SIGSTOP) long enough to be taken for
   * dead, or the database's write lock held past the instances' busy timeout, as by an
   * instance stopped inside a transaction.
   */
  stall: "sigstop" | "lock" | null;
  /** The folder of the database, for the lock. */
  dir: string;
}

/** Longer than the gateway's busy timeout (10 s). */
const LOCK_MS = 12_000;

/** Waits this long for a whole success to kill on before a plain kill. */
const SUCCESS_WAIT_MS = 3_000;

/**
 * Every 2-5 s until `until`, one blow to a random instance, then new instances up to the
 * count: a SIGKILL (plain, right after a top-up or a price change was sent to it, at the
 * receipt of a whole success, when a usage row written after the end of the response would
 * still be uncommitted, or while it shuts down after a SIGTERM), or a SIGTERM; once, when
 * asked, a stall (Fleet.stall, or the write lock held). Returns what was done.
 */
export async function runChaos(plan: ChaosPlan): Promise<string[]> {
  const { fleet, random, until } = plan;
  const done: string[] = [];
  let killAllAt = plan.killAll ? Date.now() + (until - Date.now()) / 2 : Infinity;
  let stall = plan.stall;
  for (;;) {
    await sleep(Math.min(random.int(2_000, 5_000), Math.max(0, until - Date.now())));
    if (Date.now() >= until) return done;
    if (stall === "lock") {
      stall = null;
      await holdWriteLock(plan.dir);
      done.push("write lock held 12 s");
    } else if (stall === "sigstop" && fleet.live.length > 1) {
      stall = null;
      void fleet.stall(fleet.pick(random)!);
      done.push("stall");
    } else if (Date.now() >= killAllAt) {
      killAllAt = Infinity;
      done.push(`SIGKILL to all ${await fleet.killAll()}`);
    } else {
      const victim = fleet.pick(random);
      if (victim) done.push(await blow(plan, victim));
    }
    while (fleet.size < plan.instances) await fleet.start();
  }
}

/** Takes the database's write lock from this process and keeps it for LOCK_MS. */
async function holdWriteLock(dir: string): Promise<void> {
  const db = new Database(join(dir, "gateway.db"));
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    db.exec("BEGIN IMMEDIATE");
    await sleep(LOCK_MS);
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

async function blow(plan: ChaosPlan, victim: GatewayProcess): Promise<string> {
  const { fleet, random, operator } = plan;
  const how = random.weighted({ kill: 35, killInTopUp: 15, killInPrice: 15, killOnSuccess: 15, term: 12, killInDrain: 8 });
  if (how === "kill") {
    await fleet.end(victim, "SIGKILL");
  } else if (how === "killInTopUp" || how === "killInPrice") {
    const sent = how === "killInTopUp" ? operator.topUp(victim) : operator.changePrice(victim);
    await sleep(random.int(0, 8));
    await fleet.end(victim, "SIGKILL");
    await sent;
  } else if (how === "killOnSuccess") {
    const killed = new Promise<GatewayProcess>((resolve) => {
      plan.hooks.onWholeSuccess = (gw) => {
        plan.hooks.onWholeSuccess = undefined;
        // Synchronously, at the receipt of the success.
        void fleet.end(gw, "SIGKILL");
        resolve(gw);
      };
    });
    const gw = await Promise.race([killed, sleep(SUCCESS_WAIT_MS).then(() => null)]);
    if (gw === null) {
      plan.hooks.onWholeSuccess = undefined;
      await fleet.end(victim, "SIGKILL");
    }
  } else if (how === "killInDrain") {
    // SIGTERM, and SIGKILL while it drains, flushes, closes its leases or retires.
    await fleet.end(victim, "SIGKILL", random.int(0, 400));
  } else {
    await fleet.end(victim, "SIGTERM");
  }
  return how;
}
