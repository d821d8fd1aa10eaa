/**
 * Files from `perfpoke record` read back with perfpoke's own reader
 * (src/perfdata PerfFile): every record decodes, the counts by type equal
 * perf 6.1's `report --stats`, and the BPF program's KSYMBOL/BPF_EVENT
 * carry the name, tag and id that bpf(2) reported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { recordTypeName, RecordType } from '../src/abi/record-type.js';
import { PerfFile } from '../src/perfdata/perf-file.js';
import { runCli } from './cli.js';
import { buildBpfLoad, canRecord, perfStats, scratch } from './record-helpers.js';
import { cannotCompare } from './require-tool.js';

test('PerfFile reads a perfpoke recording with the counts perf sees', async (t) => {
  if (!canRecord(t)) return;
  const bin = buildBpfLoad();
  if (!bin) return cannotCompare(t, 'gcc cannot build tools/bpf-load here');
  const f = join(scratch('reader'), 'r.data');
  const r = runCli(['record', '-a', '-e', 'cpu-clock', '-F', '999', '-o', f, '--', bin, '1']);
  assert.equal(r.status, 0, r.stderr);
  const [, tag, progId] = /^tag ([0-9a-f]{16}) id (\d+)$/m.exec(r.stdout) ?? [];
  assert.ok(tag, r.stdout);

  const file = await PerfFile.open(f);
  const counts: Record<string, number> = {};
  const ksyms: string[] = [];
  const bpf: { bpfType: number; id: number; tag: string }[] = [];
  try {
    for await (const raw of file.records()) {
      const rec = raw.decode() as unknown as Record<string, unknown>;
      const name = recordTypeName(raw.type);
      counts[name] = (counts[name] ?? 0) + 1;
      if (raw.type === RecordType.KSYMBOL) ksyms.push(`${String(rec.name)} flags ${String(rec.flags)}`);
      if (raw.type === RecordType.BPF_EVENT) {
        bpf.push({
          bpfType: rec.bpfType as number,
          id: rec.id as number,
          tag: Buffer.from(rec.tag as Uint8Array).toString('hex'),
        });
      }
    }
  } finally {
    await file.close();
  }
  assert.deepEqual(counts, perfStats(f).counts);
  const name = `bpf_prog_${tag}_perfpoke_load`;
  assert.deepEqual(ksyms.filter((k) => k.startsWith(name)).sort(), [`${name} flags 0`, `${name} flags 1`]);
  assert.deepEqual(
    bpf
      .filter((b) => b.id === Number(progId))
      .map((b) => `${b.bpfType} ${b.tag}`)
      .sort(),
    [`1 ${tag}`, `2 ${tag}`],
  );
});
