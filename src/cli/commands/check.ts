/**
 * perfpoke check [-i DIR] [--json]: the verdict on a recording's text pokes
 * (src/machine/check-verdict.ts), printed by src/format/check-{text,json}.ts.
 */
import type { Command } from 'commander';
import { cutShortOutcome, isCutShort, judgeMachine, type CheckOutcome } from '../../machine/check-verdict.js';
import type { Machine } from '../../machine/from-perf-data.js';
import { checkJsonLines } from '../../format/check-json.js';
import { checkText } from '../../format/check-text.js';
import { loadWithProgress } from './pokes.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

const HELP = `
Verdicts (the last line; --json: the "check" object's verdict):
  consistent    exit 0  every poke's old bytes match the code at its time, and the
                        recording has all the evidence: an event with attr.text_poke,
                        at least one TEXT_POKE, a kcore_dir holding every poked address,
                        no record lost on the text_poke events, the data read to its end
  inconsistent  exit 1  a stale poke (site, symbol, first stale poke and the window in
                        which a change is missing), or a poke perf drops
  inconclusive  exit 4  no finding, but evidence is missing: no text_poke attr, no
                        TEXT_POKE records, no kcore_dir (pokes are only compared with each
                        other), records lost on a text_poke event (event, count, window),
                        a truncated file; one line each says why and what to do
  exit 2: bad input or usage; exit 3: internal error.
Linux 6.1 writes each poke once per text_poke event: such copies are applied once
and reported as a note.
Examples:
  perfpoke check -i perf.data.dir
  perfpoke check -i perf.data.dir --json | jq -c 'select(.type == "check")'`;

export function register(program: Command): void {
  program
    .command('check')
    .description("verify every TEXT_POKE's old bytes against the code image at its time; find lost pokes")
    .option(
      '-i, --input <path>',
      `a \`perf record --kcore\` directory (or a perf.data file: then only pokes are compared to each other); ${INPUT_DEFAULT_HELP}`,
    )
    .hook('preAction', fillDefaultInput)
    .option('--json', 'JSON Lines: "stale"/"dropped" objects, then one "check" summary')
    .option('--text-poke-abi <abi>', "'final' (upstream, type 20) or 'rfc' (the seed's type 19 form)", 'final')
    .addHelpText('after', HELP)
    .action(async (opts: { input: string; json?: boolean; textPokeAbi?: string }) => {
      let m: Machine | undefined;
      let o: CheckOutcome;
      try {
        m = await loadWithProgress(opts.input, opts.textPokeAbi, { partial: true });
        o = judgeMachine(m);
      } catch (e) {
        if (!isCutShort(e)) throw e;
        o = cutShortOutcome(e.message);
      }
      process.exitCode = o.exitCode;
      const lines = opts.json ? checkJsonLines(m, o) : checkText(m, o).map((l) => `${l}\n`);
      process.stdout.write(lines.join(''));
    });
}
