import type { SyncSql } from "./sync-sql.ts";

/** Rows per statement, largest first; a batch is cut into these so only three texts are ever prepared. */
const GROUP_SIZES = [16, 4, 1] as const;

/**
 * Inserts many rows of one table in few statements. Binding goes through one native call per
 * statement, and that call, not SQLite, was most of a one-row insert's cost (a 14-column usage
 * row: about 7 µs alone, 5.7 µs in groups of 8). The statement texts are fixed, one per group
 * size, so each stays prepared (SyncSql keeps every text it has seen).
 */
export class RowInserter {
  readonly #texts: ReadonlyMap<number, string>;

  /** `oneRow` is an `INSERT ... VALUES (?, ...)` text for a single row. */
  constructor(oneRow: string) {
    const tuple = oneRow.slice(oneRow.lastIndexOf("("));
    if (!/^\((\?, )*\?\)$/.test(tuple)) throw new Error(`RowInserter needs a one-row VALUES text, got: ${oneRow}`);
    this.#texts = new Map(GROUP_SIZES.map((size) => [size, oneRow + `, ${tuple}`.repeat(size - 1)]));
  }

  /** Inserts `rows` (each in the column order of the text) in their order. */
  insert(sql: SyncSql, rows: readonly (readonly unknown[])[]): void {
    let next = 0;
    for (const size of GROUP_SIZES) {
      for (; rows.length - next >= size; next += size) {
        sql.run(this.#texts.get(size)!, size === 1 ? rows[next]! : rows.slice(next, next + size).flat());
      }
    }
  }
}
