/**
 * The statements of the billing hot path (holds, settlements, usage rows), run as prepared
 * statements through SyncSql. Fixed texts, one row each: SQLite reuses one prepared
 * statement per text, where multi-row inserts of varying size each needed their own.
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
