import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { writeTransaction } from "../db/write-transaction.ts";
import { GatewayError, notFound } from "../errors/gateway-error.ts";
import { microsToUsd } from "../lib/money.ts";
import { newId } from "../lib/random-id.ts";
import { isoOf } from "../lib/time.ts";

/** The spec 2.12 top-up result. */
export interface TopUpResult {
  success: true;
  transaction_id: string;
  user_id: string;
  amount: number;
  new_balance: number;
  timestamp: string;
  payment_method: string;
}

interface TopUpRequest {
  userId: string;
  amountMicros: number;
  paymentMethod: string;
  /** Idempotency-Key header, with a fingerprint of the body it came with. */
  idempotency?: { key: string; fingerprint: string };
  now: number;
}

const SCOPE = "topup";

/**
 * How long an Idempotency-Key is remembered: a retry within it credits once, a key sent again
 * after it is a new top-up. Retries come within minutes; a week covers a payment system's
 * retry schedule and a weekend's outage, while the table stays the size of a week's top-ups.
 */
export const IDEMPOTENCY_KEPT_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Credits an account: balance, ledger row and idempotency record in one write transaction.
 * The same Idempotency-Key with the same body returns the first result and credits once;
 * with another body it is a 409, for IDEMPOTENCY_KEPT_MS. Fails closed: a database error means no credit.
 */
export async function topUp(db: Kysely<Database>, request: TopUpRequest): Promise<TopUpResult> {
  return writeTransaction(db, async (trx) => {
    // Expired records go first, so a key older than the window is not found below.
    await trx.deleteFrom("idempotency_records").where("created_at", "<=", request.now - IDEMPOTENCY_KEPT_MS).execute();
    if (request.idempotency) {
      const previous = await trx
        .selectFrom("idempotency_records")
        .select(["scope", "request_hash", "response_json"])
        .where("key", "=", request.idempotency.key)
        .executeTakeFirst();
      if (previous) {
        if (previous.scope !== SCOPE || previous.request_hash !== request.idempotency.fingerprint) {
          throw new GatewayError(409, "This Idempotency-Key was already used with a different request");
        }
        return JSON.parse(previous.response_json) as TopUpResult;
      }
    }
    const user = await trx
      .updateTable("users")
      .set((eb) => ({ balance_micros: eb("balance_micros", "+", request.amountMicros), updated_at: request.now }))
      .where("id", "=", request.userId)
      .returning(["balance_micros"])
      .executeTakeFirst();
    if (!user) throw notFound(`No user with id '${request.userId}'`);
    const transactionId = newId("txn");
    await trx
      .insertInto("ledger")
      .values({
        user_id: request.userId,
        kind: "topup",
        amount_micros: request.amountMicros,
        balance_after_micros: user.balance_micros,
        reference: transactionId,
        created_at: request.now,
      })
      .execute();
    const result: TopUpResult = {
      success: true,
      transaction_id: transactionId,
      user_id: request.userId,
      amount: microsToUsd(request.amountMicros),
      new_balance: microsToUsd(user.balance_micros),
      timestamp: isoOf(request.now),
      payment_method: request.paymentMethod,
    };
    if (request.idempotency) {
      await trx
        .insertInto("idempotency_records")
        .values({
          key: request.idempotency.key,
          scope: SCOPE,
          request_hash: request.idempotency.fingerprint,
          response_json: JSON.stringify(result),
          created_at: request.now,
        })
        .execute();
    }
    return result;
  });
}
