import type { Kysely } from "kysely";
import { initial } from "./001-initial.ts";
import { holds } from "./002-holds.ts";
import { imagePrices } from "./003-image-prices.ts";
import { leanBillingTables } from "./004-lean-billing-tables.ts";
import { clusteredUsageLog } from "./005-clustered-usage-log.ts";
import { balanceLeases } from "./006-balance-leases.ts";
import { rateUsage } from "./007-rate-usage.ts";
import { rateLevels } from "./008-rate-levels.ts";
import { cacheWritePrices } from "./009-cache-write-prices.ts";
import { webSearchPrices } from "./010-web-search-prices.ts";
import { rerankSearchPrices } from "./011-rerank-search-prices.ts";
import { adminChanges } from "./012-admin-changes.ts";
import { adminListingIndexes } from "./013-admin-listing-indexes.ts";
import { usageDays } from "./014-usage-days.ts";
import { idempotencyExpiry } from "./015-idempotency-expiry.ts";
import { keptResponses } from "./016-kept-responses.ts";
import { rateWindows } from "./017-rate-windows.ts";
import { keptThinking } from "./018-kept-thinking.ts";
import { keptThinkingByOwner } from "./019-kept-thinking-by-owner.ts";
import { longPromptPrices } from "./020-long-prompt-prices.ts";

/** One schema change. `id` sorts in application order and is recorded once applied. */
export interface Migration {
  id: string;
  up(db: Kysely<unknown>): Promise<void>;
}

/**
 * Every migration, in order. A static list because the compiled executable has no folder
 * to read migration files from.
 */
export const MIGRATIONS: readonly Migration[] = [initial, holds, imagePrices, leanBillingTables, clusteredUsageLog, balanceLeases, rateUsage, rateLevels, cacheWritePrices, webSearchPrices, rerankSearchPrices, adminChanges, adminListingIndexes, usageDays, idempotencyExpiry, keptResponses, rateWindows, keptThinking, keptThinkingByOwner, longPromptPrices];
