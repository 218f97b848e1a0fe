import { GatewayError } from "../errors/gateway-error.ts";
import type { Logger } from "../lib/logger.ts";
import { whyDatabaseUnwritable } from "./database-unwritable.ts";

/** How long a caller is asked to wait when the database cannot be written: the operator has to act first. */
const RETRY_AFTER_SECONDS = "30";

/** The 503 of a request that could not be served because the database cannot be written. */
export function databaseUnwritableError(): GatewayError {
  return new GatewayError(503, "The gateway cannot write to its database; retry later", { "retry-after": RETRY_AFTER_SECONDS });
}

/**
 * Whether the database takes writes, as the last write found. One the machine refused (a
 * full disk, a read-only file, an I/O error) shuts it, and only a write that goes through
 * (the heartbeat, every 5 s) opens it again. While it is shut, model requests are refused
 * before any upstream call: a request drawn on a balance lease holds its funds in memory,
 * so it would reach the upstream, be served, and find no way to write its usage row; the
 * operator would pay the provider for an answer nobody was billed for.
 */
export class DatabaseWritable {
  #shutBecause: string | null = null;
  /** Why the database the gateway writes is no longer the one its next start will read, if it is not. */
  #lostBecause: string | null = null;

  constructor(private readonly log: Logger) {}

  /** Notes a write that failed: one the machine refused shuts the database, logged once until it opens. */
  failed(error: unknown): void {
    const why = whyDatabaseUnwritable(error);
    if (why === null) return;
    if (this.#shutBecause === null) {
      const code = (error as { code: string }).code;
      this.log.error(`database cannot be written: ${why} (${code}); model requests are refused until a write goes through`, { code });
    }
    this.#shutBecause = why;
  }

  /** Notes a write that went through: the database is open again. */
  succeeded(): void {
    if (this.#shutBecause === null) return;
    this.#shutBecause = null;
    this.log.warn("database writable again; model requests are served");
  }

  /**
   * Notes that the database file is no longer the one the gateway opened (removed, or another
   * put in its place): writes still go through, to a file the next start will not read, so
   * every usage row and charge from now on would be lost. Only a restart mends it.
   */
  lost(why: string): void {
    if (this.#lostBecause !== null) return;
    this.#lostBecause = why;
    this.log.error(`database lost: ${why}; what the gateway writes now would be lost at its next start, so model requests are refused until it is restarted`);
  }

  /** The 503, thrown while the database is shut or lost. */
  assertOpen(): void {
    if (this.#shutBecause !== null || this.#lostBecause !== null) throw databaseUnwritableError();
  }
}
