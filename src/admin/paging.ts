import { badRequest } from "../errors/gateway-error.ts";

/** A page request: 1-based page and its size. */
export interface Paging {
  page: number;
  limit: number;
  offset: number;
}

/** A query parameter that must be a whole number from 1 to `max`, `fallback` when absent; otherwise a 400 naming it. */
export function positiveInteger(name: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined || text === "") return fallback;
  if (!/^\d+$/.test(text)) throw badRequest(`Invalid '${name}': must be a positive integer`);
  const value = Number(text);
  if (value < 1) throw badRequest(`Invalid '${name}': must be at least 1`);
  if (value > max) throw badRequest(`Invalid '${name}': must be at most ${max}`);
  return value;
}

/** Reads `page` and `limit` from a query; out-of-range or non-numeric values are a 400. */
export function parsePaging(query: (name: string) => string | undefined, defaultLimit: number, maxLimit: number): Paging {
  const page = positiveInteger("page", query("page"), 1, 1_000_000);
  const limit = positiveInteger("limit", query("limit"), defaultLimit, maxLimit);
  return { page, limit, offset: (page - 1) * limit };
}
