/**
 * The overall deadline of one upstream call: aborts when the client goes away or `ms` pass,
 * whichever comes first. `clear` must be called when the call is over. AbortSignal.timeout
 * cannot be cleared, and its timer kept every request's fetch state alive for the whole
 * timeout (10 minutes by default): about 45 MB after 90k requests.
 */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #client: AbortSignal;
  readonly #onClientAbort = () => this.#controller.abort(this.#client.reason);
  #followsClient = false;

  constructor(client: AbortSignal, ms: number) {
    this.#client = client;
    this.#timer = setTimeout(() => this.#controller.abort(new DOMException("the request's deadline passed", "TimeoutError")), ms);
    this.followClient();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * From now on only the timer aborts: the client leaving no longer does. For an answer read
   * whole once its head is in, which the upstream has made (and bills) by then.
   */
  outliveClient(): void {
    // Once: a removal costs a search of the signal's listeners, and clear() would repeat it.
    if (!this.#followsClient) return;
    this.#followsClient = false;
    this.#client.removeEventListener("abort", this.#onClientAbort);
  }

  /**
   * The client leaving aborts again, at once if it has left meanwhile: the answer that outlived
   * it failed, and the next channel's try has made nothing the caller would be charged for.
   */
  followClient(): void {
    if (this.#followsClient) return;
    this.#followsClient = true;
    if (this.#client.aborted) this.#onClientAbort();
    else this.#client.addEventListener("abort", this.#onClientAbort, { once: true });
  }

  /** Stops the timer and lets go of the client's signal; the signal stays as it is. */
  clear(): void {
    clearTimeout(this.#timer);
    this.outliveClient();
  }
}
