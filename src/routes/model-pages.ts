/** One page of an ordered list, and whether more lie past it in the direction it was read. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** Where a cursor page starts: after a place in the order (forward), before one (backward), or at the start. */
export interface PageCursor<P> {
  limit: number;
  after?: P;
  before?: P;
}

/** Ascending ID order, where a cursor's place is its ID. */
export const byId = (item: { id: string }, id: string) => (item.id < id ? -1 : item.id > id ? 1 : 0);

/**
 * The page of `ordered` that a cursor asks for, `compare` saying where an item stands against
 * a cursor's place (below 0 before it) in the order the list is sorted in. Cursors are placed
 * by that order rather than by index, so in ID order, where an ID is its own place, a model
 * removed between two pages does not end the paging.
 */
export function cursorPage<T, P>(ordered: readonly T[], cursor: PageCursor<P>, compare: (item: T, place: P) => number): Page<T> {
  if (cursor.before !== undefined) {
    const before = ordered.filter((item) => compare(item, cursor.before!) < 0);
    return { items: before.slice(-cursor.limit), hasMore: before.length > cursor.limit };
  }
  const after = cursor.after === undefined ? ordered : ordered.filter((item) => compare(item, cursor.after!) > 0);
  return { items: after.slice(0, cursor.limit), hasMore: after.length > cursor.limit };
}
