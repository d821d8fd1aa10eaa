/**
 * `perfpoke dump --hex -i DIR` on `perf record --kcore` directories equals
 * `perf script -D -i DIR` byte for byte, TEXT_POKE symbols included: perf
 * names them from kcore_dir once the first poke loads the kernel map, from
 * the kcore when kcore_dir/modules matches the module maps, else from kallsyms
 * alone (src/machine/kernel-symbols.ts). perf-alone takes the first path,
 * perfpoke-kcore (recorded with an empty `modules`) the second.
 *
 * The two-consumer recordings (perf-kcore, perfpoke-two) are left out: Linux
 * 6.1 inflates their second copies and perf reads those at time 0, where
 * perfpoke reads the real sample_id (docs/real-kernel.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runCli, runPerf } from './cli.js';
import { cannotCompare } from './require-tool.js';

for (const name of ['perf-alone', 'perfpoke-kcore']) {
  test(`dump --hex -i DIR equals perf script -D -i DIR on ${name}, TEXT_POKE symbols included`, (t) => {
    const dir = join('test', 'fixtures', 'real-kernel', name);
    const perf = runPerf(['script', '-D', '-i', dir]);
    if (perf === null) return cannotCompare(t, 'perf 6.1 is not installed at /usr/bin/perf');
    assert.equal(perf.status, 0, perf.stderr);
    const ours = runCli(['dump', '--hex', '-i', dir]);
    assert.equal(ours.status, 0, ours.stderr);
    const named = perf.stdout.split('\n').filter((l) => / PERF_RECORD_TEXT_POKE [0-9a-f]+ \S+\+0x/.test(l));
    assert.ok(named.length > 100, `perf names ${named.length} pokes`);
    assert.equal(ours.stdout, perf.stdout);
    t.diagnostic(`${ours.stdout.split('\n').length} lines equal, ${named.length} TEXT_POKE symbols among them`);
  });
}
