/**
 * Where the flow decoder resumes after code it cannot read, against perf 6.1:
 * a simulated recording whose kcore text segment is cut short (so most of the
 * code is missing), decoded by perf and by decodeFlow with each
 * afterUnreadableCode choice. perf's non-strict build forgets the last IP
 * (INTEL_PT_STATE_ERR2 = NO_IP): 'forget-ip' must give perf's error list
 * exactly (so must 'next-psb' here: with the IP forgotten, only a PSB+ gives
 * one again). The default ('next-ip', kept so that existing output stays the
 * same) resyncs at every IP packet and reports many more.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulate } from '../src/sim/simulate.js';
import { loadPtRecording } from '../src/intelpt/flow/recording.js';
import { decodeFlow } from '../src/intelpt/flow/decode.js';
import { tscToPerfTime } from '../src/intelpt/flow/time-conv.js';
import type { FlowErrorOptions } from '../src/intelpt/flow/cpu-flow.js';
import { runPerf } from './cli.js';

const perfOk = existsSync('/usr/bin/perf') && runPerf(['--version']) !== null;
const dir = mkdtempSync(join(tmpdir(), 'perfpoke-resync-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Cut every PT_LOAD segment of an ELF64 (little-endian) core to `size` bytes. */
function cutLoadSegments(path: string, size: number): void {
  const b = readFileSync(path);
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  let cut = 0;
  for (let i = 0; i < phnum; i++) {
    const o = phoff + i * phentsize;
    if (b.readUInt32LE(o) !== 1) continue;
    b.writeBigUInt64LE(BigInt(size), o + 32); // p_filesz
    b.writeBigUInt64LE(BigInt(size), o + 40); // p_memsz
    cut++;
  }
  assert.ok(cut > 0, 'kcore has a PT_LOAD segment');
  writeFileSync(path, b);
}

const ns = (v: bigint): string => `${v / 1_000_000_000n}.${(v % 1_000_000_000n).toString().padStart(9, '0')}`;

async function ourErrors(rec: string, errors: FlowErrorOptions): Promise<string[]> {
  const r = await loadPtRecording(rec);
  const lines: string[] = [];
  decodeFlow({
    cpus: r.cpus,
    pokes: r.pokes,
    code: r.machine.image,
    timeConv: r.timeConv,
    retCompression: r.retCompression,
    errors,
    sink: {
      error: (e) => lines.push(`${ns(tscToPerfTime(e.estTsc, r.timeConv!))} ${e.cpu} 0x${e.ip.toString(16)} ${e.code}`),
    },
  });
  return lines.sort();
}

test('after unreadable code: forget-ip and next-psb give the errors of perf 6.1, next-ip more', async (t) => {
  if (!perfOk) {
    if (process.env.CI === 'true') assert.fail('perf 6.1 (/usr/bin/perf) is needed for this comparison');
    return t.skip('perf not installed');
  }
  const rec = join(dir, 'cut');
  simulate({ out: rec, seed: 1, size: 200_000, truth: false });
  cutLoadSegments(join(rec, 'kcore_dir', 'kcore'), 0x300);
  const p = runPerf(['script', '-i', rec, '--itrace=e']);
  assert.ok(p && p.status === 0, p?.stderr);
  const perf = p.stdout
    .split('\n')
    .filter((l) => l.includes('instruction trace error'))
    .map((l) => {
      const m = /time (\S+) cpu (\d+) pid -?\d+ tid -?\d+ ip (0x[0-9a-f]+) code (\d+)/.exec(l);
      assert.ok(m, l);
      return `${m[1]} ${m[2]} ${m[3]} ${m[4]}`;
    })
    .sort();
  assert.ok(perf.length > 10, `perf reports ${perf.length} errors on the cut kcore`);
  assert.ok(perf.every((l) => l.endsWith(' 5')));
  assert.deepEqual(await ourErrors(rec, { afterUnreadableCode: 'forget-ip' }), perf);
  assert.deepEqual(await ourErrors(rec, { afterUnreadableCode: 'next-psb' }), perf);
  const byIp = await ourErrors(rec, {});
  assert.ok(byIp.length > perf.length, `default: ${byIp.length} errors, perf ${perf.length}`);
});
