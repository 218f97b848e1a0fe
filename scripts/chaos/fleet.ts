import { spawnGateway, type GatewayProcess } from "../../test/billing/_support.ts";
import type { Random } from "./random.ts";
import { sleep } from "../../test/helpers/common.ts";

/** How an instance left the fleet. */
export type Ending = "SIGKILL" | "SIGTERM";

/** Longer than the registry's 15 s, plus a heartbeat: another instance takes a stalled one for dead. */
const STALL_MS = 21_000;

/** What the fleet did, for the report. */
export interface FleetCounts {
  starts: number;
  kills: number;
  terms: number;
  /** Times every instance was killed at once. */
  killAlls: number;
  /** SIGSTOPs long enough for another instance to take the stalled one for dead, each followed by SIGCONT. */
  stalls: number;
}

/**
 * The gateway processes of a soak, all on one database file: started with the test helpers
 * (`bun src/runtime/bun.ts` on 127.0.0.1), killed with SIGKILL or stopped with SIGTERM. An
 * instance leaves `live` the moment it is told to die, so traffic stops choosing it; its
 * output is kept, to look for logged errors at the end.
 */
export class Fleet {
  readonly counts: FleetCounts = { starts: 0, kills: 0, terms: 0, killAlls: 0, stalls: 0 };
  readonly #live: GatewayProcess[] = [];
  readonly #all: GatewayProcess[] = [];
  /** Why starts failed, one line each. */
  readonly failedStarts: string[] = [];
  /** Instances that exited without being told to, each with its exit code and the end of its output. */
  readonly unexpectedExits: string[] = [];
  /** Stalls in progress: each resolves once its instance runs again. */
  readonly #stalls = new Set<Promise<void>>();
  /** When an instance last died or came back from a stall: a registry pass of every live instance is due 5 s after. */
  lastDeathAt = 0;

  constructor(
    private readonly dir: string,
    private readonly env: Record<string, string>,
  ) {}

  get live(): readonly GatewayProcess[] {
    return this.#live;
  }

  /** Live instances and those stalled, which will run again. */
  get size(): number {
    return this.#live.length + this.#stalls.size;
  }

  /** A live instance, or undefined when all are down (between a kill of all and the restart). */
  pick(random: Random): GatewayProcess | undefined {
    return this.#live.length === 0 ? undefined : random.pick(this.#live);
  }

  /** Starts an instance; a start that fails (its exit is logged in `failedStarts`) is tried again, up to 5 times. */
  async start(): Promise<GatewayProcess> {
    let gw: GatewayProcess | undefined;
    for (let attempt = 1; !gw; attempt++) {
      try {
        gw = await spawnGateway(this.dir, this.env, 30_000);
      } catch (error) {
        this.failedStarts.push(String(error).split("\n").filter((line) => line.includes("failed to start") || line.includes("did not listen"))[0] ?? String(error).slice(0, 200));
        if (attempt === 5) throw error;
      }
    }
    this.counts.starts++;
    this.#all.push(gw);
    this.#live.push(gw);
    const started = gw;
    void started.proc.exited.then((code) => {
      // An instance told to die has left `live` (and a stalled one is back in it before it runs).
      if (!this.#live.includes(started)) return;
      this.#forget(started);
      const tail = started.output().trimEnd().split("\n").slice(-15).join("\n    ");
      this.unexpectedExits.push(`pid ${started.pid} exited by itself with ${code ?? started.proc.signalCode}; its last output:\n    ${tail}`);
    });
    return gw;
  }

  /**
   * Ends `gw` the way `how` says; resolves once it has exited. A SIGKILL `afterTermMs` follows
   * a SIGTERM by that long, so it lands while the instance drains (unless it exited already).
   */
  async end(gw: GatewayProcess, how: Ending, afterTermMs?: number): Promise<void> {
    this.#forget(gw);
    if (afterTermMs !== undefined) {
      gw.proc.kill("SIGTERM");
      await sleep(afterTermMs);
    }
    if (how === "SIGKILL") {
      this.counts.kills++;
      await gw.kill9();
    } else {
      this.counts.terms++;
      await gw.stop(15_000);
    }
    this.lastDeathAt = Date.now();
  }

  /**
   * SIGSTOP, then SIGCONT after STALL_MS: meanwhile the instance takes no new traffic, and
   * another one finds its heartbeat stale, refunds its holds and drops its leases; on its
   * next heartbeat it finds its record gone and registers again. Resolves once it runs again.
   */
  stall(gw: GatewayProcess): Promise<void> {
    this.#forget(gw);
    this.counts.stalls++;
    gw.proc.kill("SIGSTOP");
    const resumed = new Promise<void>((resolve) =>
      setTimeout(() => {
        gw.proc.kill("SIGCONT");
        this.#live.push(gw);
        this.lastDeathAt = Date.now();
        this.#stalls.delete(resumed);
        resolve();
      }, STALL_MS),
    );
    this.#stalls.add(resumed);
    return resumed;
  }

  /** Resolves once no instance is stalled. */
  async resumed(): Promise<void> {
    await Promise.all(this.#stalls);
  }

  /** SIGKILL to every live instance in the same instant. */
  async killAll(): Promise<number> {
    const victims = [...this.#live];
    for (const gw of victims) {
      this.#forget(gw);
      gw.proc.kill("SIGKILL");
    }
    await Promise.all(victims.map((gw) => gw.proc.exited));
    this.counts.kills += victims.length;
    this.counts.killAlls++;
    this.lastDeathAt = Date.now();
    return victims.length;
  }

  /** SIGTERM to every live instance, waiting for each to exit (the end of the soak). */
  async stopAll(): Promise<(number | null)[]> {
    const all = [...this.#live];
    for (const gw of all) this.#forget(gw);
    return Promise.all(all.map((gw) => gw.stop(15_000)));
  }

  /** Lines of JSON logs at level error, from every process ever started. */
  errorLines(): string[] {
    return this.#all.flatMap((gw) => gw.output().split("\n").filter((line) => line.includes('"level":"error"')));
  }

  #forget(gw: GatewayProcess): void {
    const at = this.#live.indexOf(gw);
    if (at >= 0) this.#live.splice(at, 1);
  }
}
