import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Logger } from "../lib/logger.ts";
import { GatewayError, type ErrorStatus } from "./gateway-error.ts";
import { errorBodyFor } from "./error-body-for.ts";
import { requestIdHeaders } from "../middleware/request-id.ts";
import { isDatabaseBusy } from "../db/database-busy.ts";
import { whyDatabaseUnwritable } from "../db/database-unwritable.ts";
import { databaseUnwritableError } from "../db/database-writable.ts";

/**
 * The one place errors become responses, in the spec's shape. A GatewayError's message is
 * shown as is; a busy database, or one the machine will not let it write (a full disk, a
 * read-only file), is a 503 to retry; anything else is logged (without request data) and
 * shown as a generic 500.
 */
export function renderError(error: unknown, c: Context, log: Logger): Response {
  let gatewayError: GatewayError;
  if (error instanceof GatewayError) {
    gatewayError = error;
  } else if (error instanceof HTTPException && error.status < 500) {
    // Hono's own 4xx (e.g. a malformed body in its parsers).
    const status = (error.status in { 400: 1, 404: 1, 413: 1 } ? error.status : 400) as ErrorStatus;
    gatewayError = new GatewayError(status, error.message || "Bad request");
  } else if (isDatabaseBusy(error)) {
    // Another process held the database's write lock past the busy timeout: nothing was
    // written (a hold not taken, a settlement given up), and a later try can succeed.
    log.warn("database busy", { path: c.req.path });
    gatewayError = new GatewayError(503, "The gateway's database is busy; retry shortly", { "retry-after": "1" });
  } else {
    const unwritable = whyDatabaseUnwritable(error);
    if (unwritable !== null) {
      // Nothing was written, as with a busy database, but only the operator can end it: callers
      // are told to come back rather than that the gateway broke. The cause is logged once an
      // outage by DatabaseWritable, for writes of the write turn; this line is each request's.
      const code = (error as { code: string }).code;
      log.warn(`request failed: database cannot be written: ${unwritable} (${code})`, { path: c.req.path, code });
      gatewayError = databaseUnwritableError();
    } else {
      // Name and code only: messages of database errors can quote SQL or values.
      const code = (error as { code?: unknown } | null)?.code;
      log.error("unhandled error", { path: c.req.path, error: error instanceof Error ? error.name : typeof error, code: typeof code === "string" ? code : undefined });
      gatewayError = new GatewayError(500, "The gateway failed to handle this request");
    }
  }
  const requestId = c.get("requestId") as string | undefined;
  return new Response(JSON.stringify(errorBodyFor(c.req.path, gatewayError.status, gatewayError.message, { requestId, param: gatewayError.param })), {
    status: gatewayError.status,
    headers: { "content-type": "application/json", ...gatewayError.headers, ...(requestId ? requestIdHeaders(requestId) : {}) },
  });
}
