/**
 * perfpoke report -i REC -o report.html: one self-contained HTML page of a
 * recording (src/report/): header, record counts, check verdict, the poke
 * timeline with instructions, stale windows, Intel PT decode errors and
 * samples over time. The file appears whole or not at all (temp + rename).
 */
import type { Command } from 'commander';
import { reportOf } from '../../report/index.js';
import { withOutput } from '../output.js';
import { UsageError } from '../errors.js';

const HELP = `
The page needs no network: uPlot, the page script, styles and the data are
inlined, and its Content-Security-Policy forbids any fetch. Everything taken
from the recording (comm, file and symbol names, host, cmdline) is shown as text.
Exit status: 0 written, 2 bad input or usage (nothing is written), 3 internal error.
Examples:
  perfpoke report -i perf.data.dir -o report.html
  perfpoke report -i perf.data -o - > report.html`;

export function register(program: Command): void {
  program
    .command('report')
    .description('write a self-contained HTML report: header, check verdict, poke timeline, PT errors, samples')
    .requiredOption('-i, --input <rec>', 'a perf.data file or a `perf record --kcore` directory')
    .requiredOption('-o, --output <file>', "the HTML file to write ('-': stdout)")
    .option('--name <name>', 'the title of the report; default: the input base name')
    .option('--json', 'print what was written as one JSON Lines object ({"type":"report",…})')
    .addHelpText('after', HELP)
    .action(async (o: { input: string; output: string; name?: string; json?: boolean }) => {
      if (o.input === '-') throw new UsageError('-i -: report reads its input several times; save the pipe first');
      if (o.json && o.output === '-') throw new UsageError('--json with -o -: both would go to stdout');
      const t0 = performance.now();
      const r = await reportOf(o.input, o.name !== undefined ? { name: o.name } : {});
      await withOutput(o.output, (out) => out.write(r.html));
      const seconds = (performance.now() - t0) / 1000;
      const bytes = Buffer.byteLength(r.html);
      if (o.json) {
        const line = { type: 'report', input: o.input, output: o.output, bytes, pokes: r.pokes, seconds };
        process.stdout.write(`${JSON.stringify(line)}\n`);
      } else if (o.output !== '-')
        process.stderr.write(
          `${o.output}: ${(bytes / 1024).toFixed(0)} KiB, ${r.pokes} pokes, ${seconds.toFixed(2)} s\n`,
        );
    });
}
