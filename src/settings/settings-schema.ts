import * as v from "valibot";
import { VERSION } from "../version.ts";
import { objectOnly, recordOf, withoutControlCharacters } from "../lib/schemas.ts";

const limits = v.object({
  requests_per_minute: v.pipe(v.number(), v.integer(), v.minValue(0)),
  tokens_per_minute: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

/** The stored settings. Spec 2.12 fields, plus the per-plan limits and the free-model switch. */
export const SettingsSchema = v.object({
  system_name: v.pipe(v.string(), v.minLength(1), v.maxLength(200), withoutControlCharacters),
  features: v.object({
    registration_enabled: v.boolean(),
    maintenance_mode: v.boolean(),
    default_currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, "must be a 3-letter currency code")),
  }),
  /** Limits of the default plan (`free`), as spec section 8. */
  rate_limits: limits,
  /** Limits of other plans by name; a plan not listed gets `rate_limits`. */
  plans: v.record(v.pipe(v.string(), v.regex(/^[a-z0-9_-]{1,32}$/)), limits),
  /** Serve models that have no price record (at no charge) instead of refusing them. */
  allow_unpriced_models: v.boolean(),
});

export type Settings = v.InferOutput<typeof SettingsSchema>;

/** What PATCH /v1/admin/settings accepts: every field optional, nested objects merged. */
export const SettingsPatchSchema = v.strictObject({
  system_name: v.optional(SettingsSchema.entries.system_name),
  features: v.optional(objectOnly(v.strictObject({
    registration_enabled: v.optional(v.boolean()),
    maintenance_mode: v.optional(v.boolean()),
    // Every amount the gateway shows or takes is USD (micro-USD inside); another code would
    // only relabel those numbers, e.g. /v1/balance's USD balance as EUR.
    default_currency: v.optional(v.literal("USD", "must be 'USD': balances, prices and top-ups are kept in USD")),
  }))),
  rate_limits: v.optional(objectOnly(v.strictObject({
    requests_per_minute: v.optional(limits.entries.requests_per_minute),
    tokens_per_minute: v.optional(limits.entries.tokens_per_minute),
  }))),
  plans: v.optional(recordOf(v.pipe(v.string(), v.regex(/^[a-z0-9_-]{1,32}$/)), v.nullable(limits))),
  allow_unpriced_models: v.optional(v.boolean()),
});

export type SettingsPatch = v.InferOutput<typeof SettingsPatchSchema>;

/** Settings of a new database. */
export const DEFAULT_SETTINGS: Settings = {
  system_name: "Model Gateway",
  features: { registration_enabled: false, maintenance_mode: false, default_currency: "USD" },
  rate_limits: { requests_per_minute: 10, tokens_per_minute: 100_000 },
  plans: {
    pro: { requests_per_minute: 600, tokens_per_minute: 2_000_000 },
    enterprise: { requests_per_minute: 100_000, tokens_per_minute: 100_000_000 },
  },
  allow_unpriced_models: false,
};

/** Applies a patch: nested objects are merged, a plan set to null is removed. */
export function applySettingsPatch(current: Settings, patch: SettingsPatch): Settings {
  const plans = { ...current.plans };
  for (const [name, value] of Object.entries(patch.plans ?? {})) {
    if (value === null) delete plans[name];
    else plans[name] = value;
  }
  return {
    system_name: patch.system_name ?? current.system_name,
    features: { ...current.features, ...stripUndefined(patch.features ?? {}) },
    rate_limits: { ...current.rate_limits, ...stripUndefined(patch.rate_limits ?? {}) },
    plans,
    allow_unpriced_models: patch.allow_unpriced_models ?? current.allow_unpriced_models,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The settings record as the API shows it (spec 2.12, plus plans). */
export function settingsView(settings: Settings) {
  return {
    system_name: settings.system_name,
    version: VERSION,
    features: settings.features,
    rate_limits: settings.rate_limits,
    plans: settings.plans,
    allow_unpriced_models: settings.allow_unpriced_models,
  };
}
