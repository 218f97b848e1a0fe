import { CompiledQuery, DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from "kysely";
import type { Database } from "../../src/db/schema.ts";

/** One query as the database ran it, and how many rows it returned. */
export interface LoggedQuery {
  sql: string;
  parameters: readonly unknown[];
  rows: number;
}

/** Compiles query nodes as the gateway's SQLite dialect does, without a database. */
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

/**
 * A Kysely plugin that records every query of the instance it is added to (startTestGateway's
 * `plugins`): what a request read, and from which tables, without timing anything.
 */
export class QueryLog implements KyselyPlugin {
  queries: LoggedQuery[] = [];
  #open = new Map<unknown, LoggedQuery>();

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    const compiled = compiler.getExecutor().compileQuery(node, queryId);
    const entry = { sql: compiled.sql, parameters: compiled.parameters, rows: 0 };
    this.queries.push(entry);
    this.#open.set(queryId, entry);
    return node;
  }

  async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const entry = this.#open.get(queryId);
    if (entry) entry.rows = result.rows.length;
    this.#open.delete(queryId);
    return result;
  }

  /** Forgets what was logged so far. */
  clear(): void {
    this.queries = [];
  }

  /** The logged queries that read `table`. */
  reading(table: string): LoggedQuery[] {
    const from = new RegExp(`\\b(from|join)\\s+"${table}"`, "i");
    return this.queries.filter((query) => from.test(query.sql));
  }

  /** Rows returned by the logged queries that read `table`. */
  rowsRead(table: string): number {
    return this.reading(table).reduce((sum, query) => sum + query.rows, 0);
  }
}

/** SQLite's plan for a logged query, one line per step (e.g. "SEARCH users USING INDEX ..."). */
export async function queryPlan(db: Kysely<Database>, query: LoggedQuery): Promise<string[]> {
  const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
  return rows.map((row) => row.detail);
}
