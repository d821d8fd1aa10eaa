/**
 * perfpoke sql -i REC… [--format table|csv|jsonl] "SELECT …"
 *
 * Run one query with embedded DuckDB over the tables of docs/tables.md, for
 * any number of recordings (perf.data files, --kcore directories) and export
 * folders (`perfpoke export`), given as a list or a glob.
 */
import type { Command } from 'commander';
import { resolveSqlInputs, SqlInputError } from '../../export/inputs.js';
import { UsageError } from '../errors.js';

interface SqlCliOptions {
  input: string[];
  format: string;
  branches?: boolean;
}

// DuckDB (a native library) loads only when a query runs: --help stays fast.
const loadSql = () => import('../../export/sql.js');
type SqlModule = Awaited<ReturnType<typeof loadSql>>;
const FORMATS = {
  table: (m: SqlModule) => m.formatTable,
  csv: (m: SqlModule) => m.formatCsv,
  jsonl: (m: SqlModule) => m.formatJsonLines,
} as const;

/** DuckDB's errors are one paragraph ("Parser Error: syntax error at …\n\nLINE 1: …"): keep the first line. */
function duckMessage(e: unknown): string | undefined {
  if (!(e instanceof Error) || e.constructor.name !== 'Error') return undefined;
  const m = /^(\w[\w ]* Error): (.*)$/m.exec(e.message);
  return m ? `${m[1]}: ${m[2]}` : undefined;
}

export function register(program: Command): void {
  program
    .command('sql')
    .description('query recordings and exports with SQL (embedded DuckDB): tables recordings, pokes, samples, …')
    .requiredOption('-i, --input <rec...>', 'perf.data files, --kcore directories or export folders (globs allowed)')
    .argument('[query]', 'the SQL query (after -i paths: the last word is taken as the query)')
    .option('--format <fmt>', 'table, csv or jsonl', 'table')
    .option('--branches', 'intel_pt recordings read here (not exports): fill the branches table too')
    .addHelpText(
      'after',
      `
Views: recordings, records, samples, pokes, sites, errors, branches (docs/tables.md).
Exit status: 0 ok, 2 bad input or a query DuckDB rejects.
Example: which sites were poked, how often, by kind, in each recording
  perfpoke sql -i 'runs/*' "SELECT recording, sym, kind, count(*) AS n FROM pokes
    GROUP BY ALL ORDER BY ALL"`,
    )
    .action(async (q: string | undefined, o: SqlCliOptions) => {
      // -i takes every word up to the next option, so `-i a b "SELECT …"` hands the query to -i: take it back
      const query = q ?? (o.input.length > 1 ? o.input.pop() : undefined);
      if (query === undefined) throw new UsageError('sql: give the query after the -i paths: sql -i REC "SELECT …"');
      const pick = FORMATS[o.format as keyof typeof FORMATS];
      if (!pick) throw new UsageError(`--format: expected table, csv or jsonl, got '${o.format}'`);
      let inputs: ReturnType<typeof resolveSqlInputs>;
      try {
        inputs = resolveSqlInputs(o.input);
      } catch (e) {
        if (e instanceof SqlInputError) throw new UsageError(e.message);
        throw e;
      }
      const sql = await loadSql();
      const format = pick(sql);
      const conn = await sql.openSqlSession(inputs, { branches: o.branches });
      try {
        const r = await sql.runSql(conn, query);
        process.stdout.write(format(r));
      } catch (e) {
        const m = duckMessage(e);
        if (m !== undefined) throw new UsageError(`sql: ${m}`);
        throw e;
      } finally {
        conn.closeSync();
      }
    });
}
