/** How a runtime gives memory back, in two strengths. */
export interface MemoryRelease {
  /** A full collection: frees garbage, keeps compiled code (about 0.2 ms on the next request). */
  collect(): void;
  /** Also drops compiled code and returns free pages: the next requests run cold (about 7 ms more). */
  shrink(): void;
}

/**
 * Gives memory back once traffic stops. Under load the JS heap grows to its working set and
 * the collector, tuned for throughput, keeps it; a gateway that served a burst would sit at
 * its peak for hours. The first quiet tick (no request started during it) after some traffic
 * runs a full collection, which costs the next request next to nothing. If the quiet lasts
 * `shrinkAfterTicks` ticks, it also drops compiled code: that gives back the most, but the
 * next requests run cold, so it waits until traffic has really gone.
 */
export class IdleReclaimer {
  private started = 0;
  private startedAtLastTick = 0;
  /** Quiet ticks in a row; starts as if everything was released already. */
  private quietTicks: number;

  /** `shrinkAtQuietTick` (2 or more): which quiet tick in a row also drops compiled code. */
  constructor(
    private readonly release: MemoryRelease,
    private readonly shrinkAtQuietTick: number,
  ) {
    this.quietTicks = shrinkAtQuietTick;
  }

  /** Counts a request; called once per request as it starts. */
  noteRequest(): void {
    this.started += 1;
  }

  /** Called every tick; returns what it released, if anything. */
  tick(): "collect" | "shrink" | null {
    const quiet = this.started === this.startedAtLastTick;
    this.startedAtLastTick = this.started;
    if (!quiet) {
      this.quietTicks = 0;
      return null;
    }
    if (this.quietTicks >= this.shrinkAtQuietTick) return null;
    this.quietTicks += 1;
    if (this.quietTicks === 1) {
      this.release.collect();
      return "collect";
    }
    if (this.quietTicks === this.shrinkAtQuietTick) {
      this.release.shrink();
      return "shrink";
    }
    return null;
  }
}
