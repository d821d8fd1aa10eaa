/**
 * `record({ kcore: true })` end to end on a synthetic /proc (this machine has
 * no /proc/kcore): perf's --kcore layout, OUTPUT/data + OUTPUT/kcore_dir,
 * and perf 6.1 reads the data file and the directory without a warning.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { record } from '../src/record/session.js';
import { fakeProc, STEXT, ETEXT } from './kcore-fixture.js';
import { runPerf } from './cli.js';
import { canRecord } from './record-helpers.js';

test('record --kcore writes OUTPUT/data and OUTPUT/kcore_dir, and perf reads them', async (t) => {
  if (!canRecord(t)) return;
  const proc = fakeProc();
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  const out = join(proc, 'rec.data');
  const ac = new AbortController();
  const r = await record({
    output: out,
    kcore: true,
    procRoot: proc,
    signal: ac.signal,
    onStarted: () => setTimeout(() => ac.abort(), 300),
  });
  assert.equal(r.output, out);
  assert.equal(r.dataPath, join(out, 'data'));
  assert.deepEqual(readdirSync(out).sort(), ['data', 'kcore_dir']);
  assert.deepEqual(readdirSync(join(out, 'kcore_dir')).sort(), ['kallsyms', 'kcore', 'modules']);
  // as perf creates them: OUTPUT and kcore_dir 0700, the kernel copies 0400, data 0600
  const mode = (p: string): number => statSync(p).mode & 0o777;
  assert.equal(mode(out), 0o700);
  assert.equal(mode(join(out, 'kcore_dir')), 0o700);
  for (const f of ['kallsyms', 'kcore', 'modules']) assert.equal(mode(join(out, 'kcore_dir', f)), 0o400, f);
  assert.equal(mode(join(out, 'data')), 0o600);
  assert.equal(readFileSync(join(out, 'kcore_dir', 'kallsyms'), 'utf8'), readFileSync(join(proc, 'kallsyms'), 'utf8'));
  assert.deepEqual(
    readdirSync(proc).filter((n) => n.startsWith('.')),
    [],
    'no staging folder left',
  );
  const d = runPerf(['script', '-D', '-i', join(out, 'data')])!;
  assert.equal(d.status, 0, d.stderr);
  assert.equal(d.stderr.trim(), '');
  // the kernel MMAP comes from the fake kallsyms
  const hex = (v: bigint): string => `0x${v.toString(16)}`;
  assert.match(
    d.stdout,
    new RegExp(
      `PERF_RECORD_MMAP -1/0: \\[${hex(STEXT)}\\(${hex(ETEXT - STEXT)}\\) @ ${hex(STEXT)}\\]: ` +
        'x \\[kernel\\.kallsyms\\]_text',
    ),
  );
  const s = runPerf(['report', '--stats', '-i', out])!;
  assert.equal(s.status, 0, s.stderr);
  assert.equal(s.stderr.trim(), '');
  // a second run moves the first aside, as perf does (OUTPUT.old)
  const ac2 = new AbortController();
  await record({
    output: out,
    kcore: true,
    procRoot: proc,
    signal: ac2.signal,
    onStarted: () => setTimeout(() => ac2.abort(), 100),
  });
  assert.ok(existsSync(join(`${out}.old`, 'kcore_dir', 'kcore')));
});
