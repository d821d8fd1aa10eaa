/**
 * Damaged recordings: `header`, `stats`, `dump --hex` and `script` print what
 * perf 6.1 prints on the same file (`perf report --header-only`, `perf report
 * --stats`, `perf script -D`, `perf script`), then one line naming the offset of the damage on stderr,
 * exit 2, no stack trace. The damaged copies are made here from the fixtures.
 * Documented differences (docs/reader.md "Damaged recordings"): where perf
 * prints a record cut by the end of the file (zero-filled from its mmap) we
 * stop before it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runPerf, repoRoot } from './cli.js';
import { cannotCompare, needTool } from './require-tool.js';
import { recordLines } from './perf-dump-lines.js';
import { tempDir } from './temp-dir.js';

const fx = (p: string) => readFileSync(join(repoRoot, 'test/fixtures', p));

interface FileLayout {
  dataOffset: number;
  dataSize: number;
  attrsOffset: number;
  /** Feature table entries: where each entry is, and the section it points to. */
  entries: { at: number; offset: number; size: number }[];
}

function layout(b: Buffer): FileLayout {
  const dataOffset = Number(b.readBigUInt64LE(40));
  const dataSize = Number(b.readBigUInt64LE(48));
  let n = 0;
  for (let i = 72; i < 104; i++) for (let v = b[i] ?? 0; v; v >>= 1) n += v & 1;
  const table = dataOffset + dataSize;
  const entries = Array.from({ length: n }, (_, i) => ({
    at: table + 16 * i,
    offset: Number(b.readBigUInt64LE(table + 16 * i)),
    size: Number(b.readBigUInt64LE(table + 16 * i + 8)),
  }));
  return { dataOffset, dataSize, attrsOffset: Number(b.readBigUInt64LE(24)), entries };
}

/** Offsets of a pipe stream's records (the HEADER_TRACING_DATA payload skipped). */
function pipeRecords(b: Buffer): number[] {
  const out: number[] = [];
  for (let pos = 16; pos + 8 <= b.length; ) {
    out.push(pos);
    const type = b.readUInt32LE(pos);
    const size = b.readUInt16LE(pos + 6);
    if (type === 66) pos += Math.ceil(b.readUInt32LE(pos + 8) / 8) * 8;
    pos += size;
  }
  return out;
}

interface Damage {
  name: string;
  make(): Buffer;
  /** Where ours knowingly differs from perf (see the file comment). */
  cutRecord?: boolean;
  /** The cut takes the kernel's BUILD_ID entry: `script` differs from perf on kernel samples (see the loop). */
  kernelIdCut?: boolean;
}

const basic = () => fx('features/basic.data');
const entry = (b: Buffer, i: number) => layout(b).entries[i] ?? assert.fail(`no feature entry ${i}`);
const damages: Damage[] = [
  // BUILD_ID cut in the middle: every later section unread (perf: "(null)", zeros)
  { name: 'feature-cut-build-id', make: () => basic().subarray(0, entry(basic(), 0).offset + 100), kernelIdCut: true },
  // cut inside EVENT_DESC: the sections before it are whole
  { name: 'feature-cut-event-desc', make: () => basic().subarray(0, entry(basic(), 10).offset + 10) },
  {
    name: 'feature-entry-past-end',
    make: () => {
      const b = Buffer.from(basic());
      b.writeBigUInt64LE(100000n, entry(b, 5).at); // NRCPUS
      return b;
    },
  },
  {
    name: 'system-wide-feature-cut',
    make: () => {
      const b = fx('features/system.data');
      const l = layout(b);
      return b.subarray(0, l.dataOffset + l.dataSize + 16 * l.entries.length + 200);
    },
    kernelIdCut: true,
  },
  {
    name: 'data-cut',
    make: () => {
      const b = fx('recorded/sw.data');
      const l = layout(b);
      return b.subarray(0, l.dataOffset + Math.floor(l.dataSize / 2));
    },
    cutRecord: true,
  },
  { name: 'attrs-cut', make: () => basic().subarray(0, layout(basic()).attrsOffset + 40) },
  {
    name: 'pipe-zero-size',
    make: () => {
      const b = Buffer.from(fx('recorded/pipe.data'));
      const at = pipeRecords(b)[30] ?? assert.fail('pipe.data too short');
      b.writeUInt16LE(0, at + 6);
      return b;
    },
  },
  {
    name: 'pipe-cut',
    make: () => {
      const b = fx('recorded/pipe.data');
      const at = pipeRecords(b)[40] ?? assert.fail('pipe.data too short');
      return b.subarray(0, at + 6);
    },
  },
];

function assertOneLineError(what: string, r: { status: number; stderr: string }): number {
  assert.equal(r.status, 2, `${what}: exit status (stderr: ${r.stderr})`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${what}: no stack trace`);
  const m = /at offset 0x([0-9a-f]+)/.exec(r.stderr);
  assert.ok(m?.[1], `${what}: the error names an offset: ${r.stderr}`);
  return Number.parseInt(m[1], 16);
}

const dir = tempDir('perfpoke-damaged-');
for (const d of damages) {
  test(`damaged recording ${d.name}: header, stats and dump print what perf prints, then one error line`, (t) => {
    if (!needTool(t, 'perf')) return;
    const name = `${d.name}.data`;
    writeFileSync(join(dir, name), d.make());
    const run = (args: string[]) => runCli([...args, '-i', name], { cwd: dir });
    const perf = (args: string[]) => runPerf([...args, '-i', name], { cwd: dir });

    const ph = perf(['report', '--header-only']);
    const ps = perf(['report', '--stats']);
    const pd = perf(['script', '-D']);
    if (!ph || !ps || !pd) return cannotCompare(t, 'perf 6.1 did not run');

    const oh = run(['header']);
    assertOneLineError(`${name} header`, oh);
    assert.deepEqual(oh.stdout.split('\n'), ph.stdout.split('\n'), `${name}: header stdout`);

    const os = run(['stats']);
    assertOneLineError(`${name} stats`, os);
    assert.equal(os.stdout, ps.stdout, `${name}: stats stdout`);

    const od = run(['dump', '--hex']);
    const at = assertOneLineError(`${name} dump`, od);
    let want = recordLines(pd.stdout);
    if (d.cutRecord) {
      // perf prints the record the end of the file cuts (zero-filled) and what follows; we stop before it
      const i = want.findIndex((l) => l.startsWith(`0x${at.toString(16)}@`));
      assert.ok(i > 0, `${name}: perf printed the cut record at 0x${at.toString(16)}`);
      want = want.slice(0, i);
    }
    assert.deepEqual(recordLines(od.stdout), want, `${name}: dump --hex record lines`);

    // perf prints the zero-filled cut record (see above); where the cut takes the kernel's BUILD_ID entry,
    // perf 6.1 prints [unknown] for kernel samples and we look them up in this host's kallsyms, as for a
    // recording that names no kernel build-id (docs/reader.md, "Damaged recordings")
    if (d.cutRecord || d.kernelIdCut) return;
    // script: every sample line before the damage (the last ones once stayed in the output buffer)
    const pscr = perf(['script']);
    if (!pscr) return cannotCompare(t, 'perf 6.1 did not run');
    const oscr = run(['script']);
    assertOneLineError(`${name} script`, oscr);
    assert.equal(oscr.stdout, pscr.stdout, `${name}: script stdout`);
  });
}
