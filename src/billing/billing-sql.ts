/**
 * The statements of the billing hot path (holds, settlements, usage rows), run as prepared
 * statements through SyncSql. Fixed texts, one row each: SQLite reuses one prepared
 * statement per text. Batches insert rows through RowInserter, whose multi-row texts are
 * fixed too (a few group sizes).
 */
export const SELECT_BALANCE = "SELECT balance_micros FROM users WHERE id = ?";
export const DEBIT_BALANCE = "UPDATE users SET balance_micros = balance_micros - ? WHERE id = ?";
export const SETTLE_BALANCE =
  "UPDATE users SET balance_micros = balance_micros + ?, total_spent_micros = total_spent_micros + ?, updated_at = ? WHERE id = ?";
export const INSERT_LEDGER =
  "INSERT INTO ledger (user_id, kind, amount_micros, balance_after_micros, reference, created_at) VALUES (?, ?, ?, ?, ?, ?)";
export const INSERT_HOLD = "INSERT INTO holds (id, user_id, amount_micros, instance_id, created_at) VALUES (?, ?, ?, ?, ?)";
export const DELETE_HOLD = "DELETE FROM holds WHERE id = ?";
export const INSERT_USAGE =
  "INSERT INTO usage_logs (id, request_id, user_id, token_id, model, endpoint, prompt_tokens, completion_tokens, cost_micros, status, latency_ms, channel_id, stream, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
export const TOUCH_TOKEN = "UPDATE tokens SET last_used = ? WHERE id = ?";

/** The account's balance, what every instance has leased of it, and whether another instance still draws on a lease. */
export const SELECT_HEADROOM =
  "SELECT u.balance_micros AS balance, " +
  "coalesce((SELECT sum(amount_micros) FROM balance_leases WHERE user_id = u.id), 0) AS leased, " +
  "coalesce((SELECT max(open) FROM balance_leases WHERE user_id = u.id AND instance_id != ?), 0) AS others_open " +
  "FROM users u WHERE u.id = ?";
export const EXTEND_LEASE =
  "INSERT INTO balance_leases (user_id, instance_id, amount_micros, open, updated_at) VALUES (?, ?, ?, 1, ?) " +
  "ON CONFLICT (user_id, instance_id) DO UPDATE SET amount_micros = amount_micros + excluded.amount_micros, open = 1, updated_at = excluded.updated_at";
export const SHRINK_LEASE = "UPDATE balance_leases SET amount_micros = amount_micros - ?, updated_at = ? WHERE user_id = ? AND instance_id = ?";
export const CLOSE_LEASE = "UPDATE balance_leases SET amount_micros = ?, open = 0, updated_at = ? WHERE user_id = ? AND instance_id = ?";
export const DELETE_LEASE = "DELETE FROM balance_leases WHERE user_id = ? AND instance_id = ?";
