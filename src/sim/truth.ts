/**
 * The simulator's ground truth: every instruction each CPU executed, with its
 * TSC, in DIR/truth.bin (written by simulate(), read back by readTruth()).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ByteWriter } from '../io/byte-writer.js';
import type { CpuRun } from './executor.js';

/** truth.bin: "PPTRUTH1", u64 base, u32 ncpus, per CPU {u32 cpu, u32 n, u32 off[n], f64 tsc[n]}. */
export function encodeTruth(base: bigint, runs: CpuRun[]): Uint8Array {
  const w = new ByteWriter(true, 1 << 20);
  w.bytes(Buffer.from('PPTRUTH1')).u64(base).u32(runs.length);
  for (const r of runs) {
    const n = r.truthOff?.length ?? 0;
    w.u32(r.cpu).u32(n);
    if (n) {
      w.bytes(new Uint8Array(r.truthOff!.buffer, r.truthOff!.byteOffset, n * 4));
      w.alignTo(8);
      w.bytes(new Uint8Array(r.truthTsc!.buffer, r.truthTsc!.byteOffset, n * 8));
    }
  }
  return w.finish();
}

export interface Truth {
  base: bigint;
  cpus: { cpu: number; off: Uint32Array; tsc: Float64Array }[];
}

export function readTruth(dir: string): Truth {
  const p = join(dir, 'truth.bin');
  if (!existsSync(p)) throw new Error(`${p}: no ground truth (simulated with --no-truth?)`);
  const b = readFileSync(p);
  if (b.subarray(0, 8).toString('latin1') !== 'PPTRUTH1') throw new Error(`${p}: not a perfpoke truth file`);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const base = dv.getBigUint64(8, true);
  const n = dv.getUint32(16, true);
  let pos = 20;
  const cpus: Truth['cpus'] = [];
  for (let i = 0; i < n; i++) {
    const cpu = dv.getUint32(pos, true);
    const cnt = dv.getUint32(pos + 4, true);
    pos += 8;
    const off = new Uint32Array(cnt);
    const tsc = new Float64Array(cnt);
    if (cnt) {
      off.set(new Uint32Array(b.buffer.slice(b.byteOffset + pos, b.byteOffset + pos + cnt * 4)));
      pos += cnt * 4;
      pos = (pos + 7) & ~7;
      tsc.set(new Float64Array(b.buffer.slice(b.byteOffset + pos, b.byteOffset + pos + cnt * 8)));
      pos += cnt * 8;
    }
    cpus.push({ cpu, off, tsc });
  }
  return { base, cpus };
}
