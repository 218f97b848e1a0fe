/**
 * Gives memory back once traffic stops. Under load the JS heap grows to its working set and
 * the collector, tuned for throughput, keeps it; a gateway that served a burst then sits at
 * its peak for hours. After a quiet interval (no request started during one whole tick) that
 * followed some traffic, `reclaim` runs once: on Bun a full collection that also releases
 * compiled code and free allocator pages. It never runs while requests keep arriving, so the
 * pause (10-20 ms measured) and the re-warming afterwards only meet traffic that was idle.
 */
export class IdleReclaimer {
  private started = 0;
  private startedAtLastTick = 0;
  private startedAtLastReclaim = 0;

  constructor(private readonly reclaim: () => void) {}

  /** Counts a request; called once per request as it starts. */
  noteRequest(): void {
    this.started += 1;
  }

  /** Called every tick: reclaims when the tick was quiet and requests came since the last reclaim. Returns whether it did. */
  tick(): boolean {
    const quiet = this.started === this.startedAtLastTick;
    this.startedAtLastTick = this.started;
    if (!quiet || this.started === this.startedAtLastReclaim) return false;
    this.startedAtLastReclaim = this.started;
    this.reclaim();
    return true;
  }
}
