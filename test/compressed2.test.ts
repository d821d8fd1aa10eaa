/**
 * PERF_RECORD_COMPRESSED2 (type 83, perf 6.16+: header, u64 data_size, zstd
 * bytes, zero padding to 8). perf 6.1 cannot write it, so the test builds
 * COMPRESSED2 recordings from real perf 6.1 recordings (file and pipe mode):
 * the data records go through the zstd CLI as a stream of small frames, cut
 * into COMPRESSED2 chunks at arbitrary bytes, so that records span chunks. `dump --hex` and
 * `stats` on it must equal perf 6.1 on the uncompressed original: every
 * record line (offsets aside: records inside a compressed record are printed
 * at its offset), and every count but TOTAL and the COMPRESSED2 line itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runPerf, repoRoot } from './cli.js';
import { cannotCompare, needTool, underCi } from './require-tool.js';
import { recordLines } from './perf-dump-lines.js';
import { tempDir } from './temp-dir.js';

const ZSTD = '/usr/bin/zstd';
const CHUNK = 200; // zstd bytes per COMPRESSED2 record: small, so that most chunks end inside a record

const SLICE = 333; // record bytes per zstd frame: slices end inside records, as perf's flushes do

function zstdFrame(bytes: Buffer): Buffer {
  const r = spawnSync(ZSTD, ['-q', '-c', '-3'], { input: bytes, maxBuffer: 1 << 28 });
  if (r.error || r.status !== 0) throw new Error(`zstd failed: ${r.stderr?.toString() ?? r.error}`);
  return r.stdout;
}

/**
 * The record bytes as a zstd stream: one frame per SLICE bytes, so decompressed
 * output ends inside records and the reader must carry the partial record over.
 */
function zstd(bytes: Buffer): Buffer {
  const frames: Buffer[] = [];
  for (let p = 0; p < bytes.length; p += SLICE) frames.push(zstdFrame(bytes.subarray(p, p + SLICE)));
  return Buffer.concat(frames);
}

/** COMPRESSED2 records holding `stream` in CHUNK-byte pieces. */
function compressed2Records(stream: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let p = 0; p < stream.length; p += CHUNK) {
    const data = stream.subarray(p, p + CHUNK);
    const pad = (8 - (data.length % 8)) % 8;
    const rec = Buffer.alloc(16 + data.length + pad);
    rec.writeUInt32LE(83, 0);
    rec.writeUInt16LE(rec.length, 6);
    rec.writeBigUInt64LE(BigInt(data.length), 8);
    data.copy(rec, 16);
    parts.push(rec);
  }
  return Buffer.concat(parts);
}

/** File mode: the data section replaced by COMPRESSED2 records, the feature table's offsets moved. */
function fileModeCompressed2(src: Buffer): Buffer {
  const dataOffset = Number(src.readBigUInt64LE(40));
  const dataSize = Number(src.readBigUInt64LE(48));
  const packed = compressed2Records(zstd(src.subarray(dataOffset, dataOffset + dataSize)));
  const delta = packed.length - dataSize;
  const head = Buffer.from(src.subarray(0, dataOffset));
  head.writeBigUInt64LE(BigInt(packed.length), 48);
  const tail = Buffer.from(src.subarray(dataOffset + dataSize));
  let n = 0;
  for (let i = 72; i < 104; i++) for (let v = src[i] ?? 0; v; v >>= 1) n += v & 1;
  for (let i = 0; i < n; i++) tail.writeBigUInt64LE(tail.readBigUInt64LE(16 * i) + BigInt(delta), 16 * i);
  return Buffer.concat([head, packed, tail]);
}

/** Pipe mode: the leading header records (attrs, features) stay, every later record is compressed. */
function pipeModeCompressed2(src: Buffer): Buffer {
  let pos = 16;
  while (pos + 8 <= src.length && src.readUInt32LE(pos) >= 64 && src.readUInt32LE(pos) !== 66)
    pos += src.readUInt16LE(pos + 6);
  return Buffer.concat([src.subarray(0, pos), compressed2Records(zstd(src.subarray(pos)))]);
}

/**
 * Pipe mode with perf 6.16's u16 wrap first: a COMPRESSED2 whose 16 + data_size
 * is 65531 has header.size 0 and no padding (record__pushfn). Its data: the first
 * slice's zstd frame, then a zstd skippable frame filling it to that size.
 */
function pipeModeWrapped(src: Buffer): Buffer {
  let pos = 16;
  while (pos + 8 <= src.length && src.readUInt32LE(pos) >= 64 && src.readUInt32LE(pos) !== 66)
    pos += src.readUInt16LE(pos + 6);
  const first = zstdFrame(src.subarray(pos, pos + SLICE));
  const dataSize = 65531 - 16;
  const skip = Buffer.alloc(dataSize - first.length);
  skip.writeUInt32LE(0x184d2a50, 0); // skippable frame magic
  skip.writeUInt32LE(skip.length - 8, 4);
  const wrapped = Buffer.alloc(16);
  wrapped.writeUInt32LE(83, 0); // header.size: 0, as PERF_ALIGN(65531, 8) = 65536 wraps
  wrapped.writeBigUInt64LE(BigInt(dataSize), 8);
  const rest = compressed2Records(zstd(src.subarray(pos + SLICE)));
  return Buffer.concat([src.subarray(0, pos), wrapped, first, skip, rest]);
}

/** perf -D's lines from the record alone, offsets and file name dropped. */
function recordLinesNoOffsets(text: string): string[] {
  return recordLines(text).map((l) =>
    l.replace(/^0x[0-9a-f]+@\S+ /, '@ ').replace(/ 0x[0-9a-f]+ (\[0x[0-9a-f]+\]: PERF_RECORD_)/, ' $1'),
  );
}

/** `perf report --stats` counts, without TOTAL, percentages and the compressed records' own line. */
function counts(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => !/TOTAL events|COMPRESSED2? events/.test(l))
    .map((l) => l.replace(/\s+\(\s*[0-9.]+%\)$/, '').trimEnd());
}

const cases = [
  { name: 'file', src: 'recorded/callchain.data', make: fileModeCompressed2 },
  { name: 'pipe', src: 'recorded/pipe.data', make: pipeModeCompressed2 },
  { name: 'pipe-wrapped', src: 'recorded/pipe.data', make: pipeModeWrapped },
];

const dir = tempDir('perfpoke-compressed2-');
for (const c of cases) {
  test(`COMPRESSED2 (${c.name} mode, records across chunks) reads as the uncompressed original`, (t) => {
    if (!needTool(t, 'perf')) return;
    if (!existsSync(ZSTD)) {
      if (underCi) assert.fail('the zstd CLI is not installed (apt-get install zstd)');
      return t.skip('the zstd CLI is not installed');
    }
    const src = readFileSync(join(repoRoot, 'test/fixtures', c.src));
    const packed = c.make(src);
    writeFileSync(join(dir, `${c.name}.data`), src);
    writeFileSync(join(dir, `${c.name}-c2.data`), packed);
    // the chunks really cut records: some chunk's decompressed bytes end inside a record
    assert.ok(packed.length > 0 && src.length / CHUNK > 4, 'several chunks');

    const perfDump = runPerf(['script', '-D', '-i', `${c.name}.data`], { cwd: dir });
    const perfStats = runPerf(['report', '--stats', '-i', `${c.name}.data`], { cwd: dir });
    if (!perfDump || !perfStats || perfDump.status !== 0) return cannotCompare(t, 'perf 6.1 did not run');

    const ours = runCli(['dump', '--hex', '-i', `${c.name}-c2.data`], { cwd: dir });
    assert.equal(ours.status, 0, ours.stderr);
    const want = recordLinesNoOffsets(perfDump.stdout);
    assert.ok(want.length > 100);
    assert.deepEqual(recordLinesNoOffsets(ours.stdout), want);

    // header walks the pipe to its end (features may come anywhere), the wrapped record included
    const hd = runCli(['header', '-i', `${c.name}-c2.data`], { cwd: dir });
    assert.equal(hd.status, 0, hd.stderr);

    const st = runCli(['stats', '-i', `${c.name}-c2.data`], { cwd: dir });
    assert.equal(st.status, 0, st.stderr);
    assert.match(st.stdout, /COMPRESSED2 events:\s+\d+/, 'the COMPRESSED2 records are counted as such');
    assert.deepEqual(counts(st.stdout), counts(perfStats.stdout));

    // export's records table: one row per COMPRESSED2 container, typed as such, beside the records inside
    const lake = join(dir, `${c.name}-lake`);
    const ex = runCli(['export', '-i', `${c.name}-c2.data`, '-o', lake, '--format', 'jsonl'], { cwd: dir });
    assert.equal(ex.status, 0, ex.stderr);
    const part = join(lake, 'records', `recording=${c.name}-c2`, 'part-0.jsonl');
    const types = readFileSync(part, 'utf8').split('\n').filter(Boolean);
    const containers = types.filter((l) => (JSON.parse(l) as { type_name: string }).type_name === 'COMPRESSED2');
    assert.equal(containers.length, Number(/COMPRESSED2 events:\s+(\d+)/.exec(st.stdout)?.[1]));
  });
}
