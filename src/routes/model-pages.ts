/** One page of a list in ID order, and whether more lie past it in the direction it was read. */
export interface IdPage<T> {
  items: T[];
  hasMore: boolean;
}

/** Where a cursor page starts: after an ID (forward), before one (backward), or at the start. */
export interface IdCursor {
  limit: number;
  afterId?: string;
  beforeId?: string;
}

/**
 * The page of `sorted` (ascending by `id`) that a cursor asks for. Cursors compare by ID
 * rather than position, so a model removed between two pages does not end the paging.
 */
export function idPage<T extends { id: string }>(sorted: readonly T[], cursor: IdCursor): IdPage<T> {
  if (cursor.beforeId !== undefined) {
    const before = sorted.filter((item) => item.id < cursor.beforeId!);
    return { items: before.slice(-cursor.limit), hasMore: before.length > cursor.limit };
  }
  const after = cursor.afterId === undefined ? sorted : sorted.filter((item) => item.id > cursor.afterId!);
  return { items: after.slice(0, cursor.limit), hasMore: after.length > cursor.limit };
}
