/**
 * Packet decode throughput against Intel's libipt (pt_pkt_next, through the
 * harness's `pt-pkts --count`, which times only its decode loop) on the same
 * ≥ 200 MB stream, generated in this run into bench/out/; and instructions
 * per second through the x86 block cache on a system binary's .text.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PacketCursor, iteratePackets } from '../src/intelpt/packets/index.js';
import { BlockCache } from '../src/x86/index.js';
import { Decoder, DecoderOptions, Instruction } from 'iced-x86';
import { libiptHarness, libiptEncode } from '../tools/libipt-harness/harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const TARGET = 200 << 20;

/** A kernel-trace-like packet mix: PSB+ every ~4 KiB, mostly TNT/TIP with compressed IPs, some timing packets. */
function description(seed: number, bytesWanted: number): string {
  let s = seed >>> 0 || 1;
  const rnd = (n: number) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
  const out: string[] = [];
  let approx = 0;
  while (approx < bytesWanted) {
    out.push(
      'psb',
      `tsc 0x${(1000000 + approx).toString(16)}`,
      'cbr 0x24',
      'mode.exec 1 0',
      'fup 6 0xffffffff81000000',
      'psbend',
    );
    approx += 42;
    for (let i = 0; i < 900; i++) {
      const r = rnd(100);
      if (r < 55) {
        out.push(`tnt.8 ${1 + rnd(6)} ${rnd(64)}`);
        approx += 1;
      } else if (r < 60) {
        const bits = 7 + rnd(40);
        out.push(`tnt.64 ${bits} 0x${(rnd(1 << 30) & ((1 << Math.min(bits, 30)) - 1)).toString(16)}`);
        approx += 8;
      } else if (r < 80) {
        out.push(`tip 1 0x${rnd(65536).toString(16)}`);
        approx += 3;
      } else if (r < 88) {
        out.push(`tip 2 0x${rnd(1 << 30).toString(16)}`);
        approx += 5;
      } else if (r < 92) {
        out.push(`mtc ${rnd(256)}`);
        approx += 2;
      } else if (r < 96) {
        out.push(`cyc 0x${rnd(4096).toString(16)}`);
        approx += 2;
      } else if (r < 98) {
        out.push(
          `fup 3 0xffff8100${rnd(65536).toString(16).padStart(4, '0')}`,
          `tip 3 0xffff8200${rnd(65536).toString(16).padStart(4, '0')}`,
        );
        approx += 14;
      } else {
        out.push('pad');
        approx += 1;
      }
    }
  }
  return `${out.join('\n')}\n`;
}

function elfText(path: string): { addr: bigint; bytes: Uint8Array } | undefined {
  if (!existsSync(path)) return undefined;
  const b = readFileSync(path);
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2) return undefined;
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const shstrndx = b.readUInt16LE(0x3e);
  const strOff = Number(b.readBigUInt64LE(shoff + shstrndx * shentsize + 0x18));
  for (let i = 0; i < shnum; i++) {
    const h = shoff + i * shentsize;
    const nameOff = strOff + b.readUInt32LE(h);
    const name = b.toString('latin1', nameOff, b.indexOf(0, nameOff));
    if (name !== '.text') continue;
    const addr = b.readBigUInt64LE(h + 0x10);
    const off = Number(b.readBigUInt64LE(h + 0x18));
    const size = Number(b.readBigUInt64LE(h + 0x20));
    return { addr, bytes: new Uint8Array(b.buffer, b.byteOffset + off, size) };
  }
  return undefined;
}

export async function run(): Promise<void> {
  const hv = libiptHarness();
  if ('skip' in hv) {
    console.log(`packets: skipped (${hv.skip})`);
    return;
  }
  const outDir = join(here, 'out');
  mkdirSync(outDir, { recursive: true });
  // ~4 MiB from libipt's encoder, repeated: each copy starts with a PSB, so the whole is one valid stream.
  const unit = libiptEncode(hv.ptEnc, description(42, 4 << 20));
  const copies = Math.ceil(TARGET / unit.length);
  const stream = new Uint8Array(unit.length * copies);
  for (let i = 0; i < copies; i++) stream.set(unit, i * unit.length);
  const file = join(outDir, 'packets.pt');
  writeFileSync(file, stream);
  const mb = stream.length / (1 << 20);

  // interleaved rounds, best of each: the machine is shared, so both sides see the same noise
  const runs = 5;
  let libNs = Infinity;
  let libPackets = 0;
  let ourNs = Infinity;
  let ourPackets = 0;
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(hv.ptPkts, ['--count', file], { encoding: 'utf8' });
    const m = /packets (\d+) bytes (\d+) ns (\d+)/.exec(r.stdout);
    if (!m) throw new Error(`pt-pkts --count: ${r.stdout} ${r.stderr}`);
    libPackets = Number(m[1]);
    libNs = Math.min(libNs, Number(m[3]));
    const t0 = process.hrtime.bigint();
    const c = new PacketCursor(stream);
    let n = 0;
    while (!c.atEnd) {
      if (c.next() > 0) n++;
      else if (!c.syncForward()) break;
    }
    ourNs = Math.min(ourNs, Number(process.hrtime.bigint() - t0));
    ourPackets = n;
  }
  if (ourPackets !== libPackets) throw new Error(`packet counts differ: ours ${ourPackets}, libipt ${libPackets}`);
  // the object API (one flat object per packet) on a 16 MiB slice
  const slice = stream.subarray(0, unit.length * Math.min(copies, 4));
  const t1 = process.hrtime.bigint();
  let objs = 0;
  for (const p of iteratePackets(slice)) if (p.kind !== 'error') objs++;
  const objNs = Number(process.hrtime.bigint() - t1);
  const libMBs = mb / (libNs / 1e9);
  const ourMBs = mb / (ourNs / 1e9);
  const objMBs = slice.length / (1 << 20) / (objNs / 1e9);
  console.log(`packets: ${mb.toFixed(0)} MB, ${libPackets} packets (best of ${runs})`);
  console.log(`  libipt pt_pkt_next        ${libMBs.toFixed(0)} MB/s`);
  console.log(
    `  perfpoke PacketCursor     ${ourMBs.toFixed(0)} MB/s   ratio ${(ourMBs / libMBs).toFixed(2)}x libipt ` +
      `(goal >= 0.5x)`,
  );
  console.log(
    `  perfpoke iteratePackets   ${objMBs.toFixed(0)} MB/s   (objects, ${objs} packets)   ratio ` +
      `${(objMBs / libMBs).toFixed(2)}x libipt`,
  );

  const text = elfText('/usr/bin/bash') ?? elfText('/usr/bin/perf');
  if (!text) {
    console.log('block cache: skipped (no ELF binary to read .text from)');
    return;
  }
  const end = text.addr + BigInt(text.bytes.length);
  const read = (addr: bigint, len: number) => {
    if (addr < text.addr || addr >= end) return undefined;
    const off = Number(addr - text.addr);
    return text.bytes.subarray(off, Math.min(text.bytes.length, off + len));
  };
  // baseline in the same run: iced-x86 decoding the whole .text linearly with one Decoder
  {
    const t = process.hrtime.bigint();
    const d = new Decoder(64, text.bytes, DecoderOptions.None);
    d.ip = text.addr;
    const ins = new Instruction();
    let n = 0;
    while (d.canDecode) {
      d.decodeOut(ins);
      void ins.flowControl;
      void ins.length;
      n++;
    }
    d.free();
    ins.free();
    console.log(
      `  iced-x86 linear decode (baseline): ${(Number(process.hrtime.bigint() - t) / n).toFixed(1)} ns/insn ` +
        `over ${n} insns`,
    );
  }
  const cache = new BlockCache(read);
  const want = 1_000_000;
  let insns = 0;
  let coldInsns = 0;
  let coldNs = 0;
  let pass = 0;
  const t2 = process.hrtime.bigint();
  while (insns < want) {
    const tp = process.hrtime.bigint();
    let pc = text.addr;
    let n = 0;
    while (pc < end && insns + n < want) {
      const b = cache.get(pc);
      n += b.insns.length;
      pc = b.stop === 'invalid' || b.stop === 'nomap' ? b.end + 1n : b.end;
    }
    insns += n;
    if (pass++ === 0) {
      coldInsns = n;
      coldNs = Number(process.hrtime.bigint() - tp);
    }
  }
  const allNs = Number(process.hrtime.bigint() - t2);
  console.log(
    `block cache: ${insns} instructions of ${text.bytes.length >> 10} KiB .text in ${pass} passes, ` +
      `${cache.size} blocks`,
  );
  console.log(`  cold (decode via iced-x86): ${(coldNs / coldInsns).toFixed(1)} ns/insn over ${coldInsns} insns`);
  console.log(`  overall (1M, cache hits after the first pass): ${(allNs / insns).toFixed(1)} ns/insn`);
}
