/** Structured log lines. Callers pass fields, never headers or bodies, so no secret is written. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const SECRET_PATTERN = /\b(sk|mk)-gw-[0-9A-Za-z]{6,}|Bearer\s+\S+/g;

/** Masks anything that looks like a gateway key or a bearer credential. */
export function redact(text: string): string {
  return text.replace(SECRET_PATTERN, "[redacted]");
}

/** A logger writing one JSON object per line through `write`. */
export function createJsonLogger(write: (line: string) => void, now: () => number): Logger {
  const emit = (level: string, message: string, fields?: Record<string, unknown>) => {
    write(redact(JSON.stringify({ time: new Date(now()).toISOString(), level, message, ...fields })));
  };
  return {
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
