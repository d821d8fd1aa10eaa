import { statSync } from 'node:fs';
import { PerfFile } from '../perfdata/perf-file.js';
import { trailerEndOf } from '../perfdata/records/index.js';
import { RecordType } from '../abi/record-type.js';
import { SampleType } from '../abi/sample-format.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import { FormatError } from '../io/errors.js';
import { CodeImage } from './code-image.js';
import { foldCopies, type PokeCopy } from './double-delivery.js';
import { EvidenceCollector, eventDescNames, eventOfId, type RecordingEvidence } from './evidence.js';
import { loadKcoreDir, resolveInput, type KcoreDir } from './kcore-dir.js';
import { kernelSymbolModel } from './kernel-symbols.js';
import type { KernelSymbolEvent, Poke } from './poke.js';
import { SymbolTable } from './symbols.js';
import { Symbolizer } from './symbolizer.js';

/**
 * Glue from a perf.data file (or a `perf record --kcore` directory) to the
 * code image: reads TEXT_POKE, KSYMBOL and kernel MMAP records in one pass,
 * loads kcore_dir when the input is a directory that has one, and builds
 * the image. Records need not be in time order: the image sorts pokes by
 * (time, file offset), perf's ordered-events order.
 */
export interface KernelMap {
  start: bigint;
  end: bigint;
  pgoff: bigint;
  filename: string;
}

export interface Machine {
  dataFile: string;
  kcore?: KcoreDir;
  image: CodeImage;
  symbolizer: Symbolizer;
  /** Every TEXT_POKE once, in file order (Linux 6.1's extra copies folded: see double-delivery.ts). */
  pokes: Poke[];
  /** The extra copies folded out of `pokes` (one per extra text_poke event and poke). */
  copies: PokeCopy[];
  /** text_poke events, lost records, truncation: what `check` needs for a verdict. */
  evidence: RecordingEvidence;
  ksymbols: KernelSymbolEvent[];
  /** Kernel-space MMAP/MMAP2 records (pid -1). */
  kernelMaps: KernelMap[];
  /** Time of the last record that had one (end of recording), or 0n. */
  lastTime: bigint;
  /** Warnings found while loading (e.g. kernel MMAP pgoff ≠ _text). */
  warnings: string[];
}

export interface LoadOptions {
  textPokeAbi?: 'final' | 'rfc';
  onProgress?: (bytesDone: number) => void;
  /** Read TEXT_POKEs through the full record decoder only (tests compare both paths). */
  noFastPath?: boolean;
  /** Stop at damage in the data section and keep what was read (evidence.truncated says where) instead of throwing. */
  partial?: boolean;
}

/**
 * Poke bytes live in shared 1 MiB blocks, and short byte strings (≤ 6
 * bytes: jump labels, static calls, ftrace) are interned — a million pokes
 * as a million separate ArrayBuffers cost more in the garbage collector than
 * in parsing. The arrays are shared: treat Poke bytes as read-only.
 */
class ByteArena {
  private block = new Uint8Array(1 << 20);
  private used = 0;
  private readonly interned = new Map<number, Uint8Array>();
  /** Copy of src[from, from+n). */
  take(src: Uint8Array, from: number, n: number): Uint8Array {
    if (n <= 6) {
      let key = n;
      for (let i = 0; i < n; i++) key = key * 256 + src[from + i]!;
      const hit = this.interned.get(key);
      if (hit) return hit;
      const b = src.slice(from, from + n);
      if (this.interned.size < 65536) this.interned.set(key, b);
      return b;
    }
    if (n > 4096) return src.slice(from, from + n);
    if (this.used + n > this.block.length) {
      this.block = new Uint8Array(1 << 20);
      this.used = 0;
    }
    const out = this.block.subarray(this.used, this.used + n);
    out.set(src.subarray(from, from + n));
    this.used += n;
    return out;
  }
  private dvBuf: ArrayBufferLike | undefined;
  private dv: DataView | undefined;
  /** A DataView over the whole buffer behind b (reused while the reader's window stays the same). */
  view(b: Uint8Array): DataView {
    if (b.buffer !== this.dvBuf) {
      this.dvBuf = b.buffer;
      this.dv = new DataView(b.buffer);
    }
    return this.dv!;
  }
}

/**
 * TEXT_POKE straight from the record bytes (upstream ABI): addr at 8,
 * old_len at 16, new_len at 18, bytes from 20; time and cpu from the
 * sample_id trailer. Returns undefined whenever anything is unusual, so the
 * full decoder handles (and reports) it.
 */
function fastPoke(raw: RawRecord, arena: ByteArena): Poke | undefined {
  const b = raw.bytes;
  const L = raw.layout;
  const size = raw.size;
  if (size < 24 || size > b.length) return undefined;
  const dv = arena.view(b);
  const o = b.byteOffset;
  const le = raw.le;
  const oldLen = dv.getUint16(o + 16, le);
  const newLen = dv.getUint16(o + 18, le);
  const trailer = L?.trailerSize ?? 0;
  if (20 + oldLen + newLen > size - trailer) return undefined;
  // Linux 6.1's inflated records keep their sample_id mid-record: let the full decoder place it
  if (trailerEndOf(RecordType.TEXT_POKE, b.subarray(0, size), le, trailer) !== size) return undefined;
  let cpu = -1;
  let time = 0n;
  if (L?.sampleIdAll) {
    if ((L.sampleType & SampleType.CPU) !== 0n) {
      const fromEnd = ((L.sampleType & SampleType.IDENTIFIER) !== 0n ? 8 : 0) + 8;
      cpu = dv.getUint32(o + size - fromEnd, le);
    }
    if (L.trailerTimeFromEnd > 0) time = dv.getBigUint64(o + size - L.trailerTimeFromEnd, le);
  }
  return {
    time,
    cpu,
    addr: dv.getBigUint64(o + 8, le),
    oldBytes: arena.take(b, 20, oldLen),
    newBytes: arena.take(b, 20 + oldLen, newLen),
    fileOffset: raw.fileOffset,
    misc: raw.misc,
    id: L?.sampleIdAll && L.isPos > 0 ? dv.getBigUint64(o + size - 8 * L.isPos, le) : undefined,
  };
}

/** Throws FormatError for a malformed file, a Node fs error for a missing one. */
export async function loadMachine(input: string, opts: LoadOptions = {}): Promise<Machine> {
  const { dataFile, kcoreDir } = resolveInput(input);
  const kcore = kcoreDir ? loadKcoreDir(kcoreDir) : undefined;
  const f = await PerfFile.open(dataFile, { textPokeAbi: opts.textPokeAbi });
  let pokes: Poke[] = [];
  const ksymbols: KernelSymbolEvent[] = [];
  const kernelMaps: KernelMap[] = [];
  let lastTime = 0n;
  let n = 0;
  const arena = new ByteArena();
  const evidence = new EvidenceCollector();
  const h = f.header;
  if (!f.pipe && h.data.size === 0 && dataFile !== '-' && h.data.offset < statSync(dataFile).size)
    evidence.truncated = {
      offset: 40,
      message: `${dataFile}: perf_file_header.data.size is 0 with records after it: perf record did not finish`,
    };
  try {
    for await (const raw of f.records()) {
      const t = raw.type;
      if (opts.onProgress && (++n & 0xfff) === 0) opts.onProgress(raw.fileOffset);
      if (t === RecordType.TEXT_POKE && opts.textPokeAbi !== 'rfc' && !opts.noFastPath) {
        const p = fastPoke(raw, arena);
        if (p) {
          if (p.time > lastTime) lastTime = p.time;
          evidence.seen(p.cpu, p.time);
          pokes.push(p);
          continue;
        }
      }
      if (t === RecordType.TEXT_POKE || (opts.textPokeAbi === 'rfc' && t === 19)) {
        const r = raw.decode();
        if (r.kind !== 'text_poke') continue;
        const time = r.sampleId?.time ?? 0n;
        if (time > lastTime) lastTime = time;
        pokes.push({
          time,
          cpu: r.sampleId?.cpu ?? -1,
          addr: r.addr,
          oldBytes: r.oldBytes,
          newBytes: r.newBytes,
          fileOffset: r.fileOffset,
          misc: r.misc,
          id: r.sampleId?.identifier ?? r.sampleId?.id,
        });
        evidence.seen(r.sampleId?.cpu ?? -1, time);
      } else if (t === RecordType.KSYMBOL) {
        const r = raw.decode();
        if (r.kind !== 'ksymbol') continue;
        const time = r.sampleId?.time ?? 0n;
        ksymbols.push({
          time,
          addr: r.addr,
          len: r.len,
          ksymType: r.ksymType,
          flags: r.flags,
          name: r.name,
          fileOffset: r.fileOffset,
        });
      } else if (t === RecordType.MMAP || t === RecordType.MMAP2) {
        const r = raw.decode();
        if ((r.kind === 'mmap' || r.kind === 'mmap2') && r.pid === -1) {
          kernelMaps.push({ start: r.addr, end: r.addr + r.len, pgoff: r.pgoff, filename: r.filename });
        }
      } else {
        const ts = raw.timestamp();
        if (ts !== undefined && ts > lastTime) lastTime = ts;
        if (t === RecordType.LOST || t === RecordType.LOST_SAMPLES || t === RecordType.AUX) evidence.observe(raw);
        else if (ts !== undefined) evidence.seenRecord(raw, ts);
      }
    }
  } catch (e) {
    if (e instanceof FormatError && opts.partial) {
      const fe = e.withFile(dataFile);
      evidence.truncated = { offset: fe.offset, message: fe.message };
    } else {
      await f.close();
      throw e instanceof FormatError ? e.withFile(dataFile) : e;
    }
  }
  // a damaged EVENT_DESC only costs the names (perf's generic ones are used then)
  const names = await eventDescNames(f).catch(() => []);
  await f.close();
  const ev = evidence.finish(f.attrs, names);
  const folded = foldCopies(pokes, (p) => eventOfId(ev, p.id)?.index, ev.textPokeEvents.length);
  pokes = folded.unique;
  const warnings: string[] = [];
  if (kcore?.textAddr !== undefined) {
    const k = kernelMaps.find((m) => m.filename.startsWith('[kernel.kallsyms]'));
    if (k && k.pgoff !== kcore.textAddr)
      warnings.push(
        `kernel MMAP pgoff 0x${k.pgoff.toString(16)} differs from _text 0x${kcore.textAddr.toString(16)} in ` +
          `kcore_dir/kallsyms: perf will not use kcore_dir`,
      );
  }
  ksymbols.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.fileOffset - b.fileOffset));
  let image: CodeImage;
  try {
    image = CodeImage.build(kcore?.segments ?? [], pokes);
  } catch (e) {
    if (e instanceof FormatError) throw e.withFile(dataFile);
    throw e;
  }
  const kmap = kernelMaps.find((m) => m.filename.startsWith('[kernel.kallsyms]'));
  const first = kmap ? image.pokes.find((pp) => pp.poke.addr >= kmap.start && pp.poke.addr < kmap.end) : undefined;
  // perf prints every poke, non-kernel cpumode ones too, and printing loads the map
  let loadAt = first?.poke;
  for (const p of image.ignoredPokes) {
    if (
      kmap &&
      p.addr >= kmap.start &&
      p.addr < kmap.end &&
      (!loadAt || p.time < loadAt.time || (p.time === loadAt.time && p.fileOffset < loadAt.fileOffset))
    )
      loadAt = p;
  }
  const model = kcore ? kernelSymbolModel(kcore, kernelMaps) : undefined;
  const symbolizer = new Symbolizer(
    model?.symbols ?? SymbolTable.empty(),
    ksymbols,
    loadAt ? { time: loadAt.time, fileOffset: loadAt.fileOffset } : undefined,
    kmap,
    model,
  );
  return {
    dataFile,
    kcore,
    image,
    symbolizer,
    pokes,
    copies: folded.copies,
    evidence: ev,
    ksymbols,
    kernelMaps,
    lastTime,
    warnings,
  };
}
