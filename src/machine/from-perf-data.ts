import { statSync } from 'node:fs';
import { PerfFile } from '../perfdata/perf-file.js';
import { RecordType } from '../abi/record-type.js';
import { SampleType } from '../abi/sample-format.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import type { AttrLayout } from '../perfdata/layout.js';
import { FormatError } from '../io/errors.js';
import { CodeImage } from './code-image.js';
import { foldCopies, type PokeCopy } from './double-delivery.js';
import { PokeStore } from './poke-store.js';
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
  /** The reader's window in bytes (default: PerfFile's). */
  windowSize?: number;
}

/**
 * A DataView over the whole buffer behind a record (reused while the reader's
 * window stays the same), and where the last layout keeps the cpu in the
 * sample_id trailer (bytes from the end, 0 = none): computed once per layout,
 * as it takes bigint masks.
 */
class WindowView {
  private buf: ArrayBufferLike | undefined;
  private dv: DataView | undefined;
  private layout: AttrLayout | undefined;
  private cpuAt = 0;
  of(b: Uint8Array): DataView {
    if (b.buffer !== this.buf) {
      this.buf = b.buffer;
      this.dv = new DataView(b.buffer);
    }
    return this.dv!;
  }
  cpuFromEnd(L: AttrLayout): number {
    if (L !== this.layout) {
      this.layout = L;
      this.cpuAt =
        (L.sampleType & SampleType.CPU) !== 0n ? ((L.sampleType & SampleType.IDENTIFIER) !== 0n ? 8 : 0) + 8 : 0;
    }
    return this.cpuAt;
  }
}

/**
 * TEXT_POKE straight from the record bytes (upstream ABI) into the store's
 * columns: addr at 8, old_len at 16, new_len at 18, bytes from 20; time and
 * cpu from the sample_id trailer; 64-bit fields as u32 halves (no bigint).
 * Returns the store index, or -1 whenever anything is unusual, so the full
 * decoder handles (and reports) it.
 */
function fastPoke(raw: RawRecord, view: WindowView, store: PokeStore): number {
  const b = raw.bytes;
  const L = raw.layout;
  const size = raw.size;
  if (size < 24 || size > b.length) return -1;
  const dv = view.of(b);
  const o = b.byteOffset;
  const le = raw.le;
  const oldLen = dv.getUint16(o + 16, le);
  const newLen = dv.getUint16(o + 18, le);
  const trailer = L?.trailerSize ?? 0;
  if (20 + oldLen + newLen > size - trailer) return -1;
  // Linux 6.1's inflated records keep their sample_id mid-record (right after the body, zeros
  // after it: see bodyEndOf in perfdata/records): let the full decoder place it
  const sidEnd = 8 + ((12 + oldLen + newLen + 7) & ~7) + trailer;
  if (sidEnd < size) {
    let zeros = true;
    for (let j = sidEnd; j < size && zeros; j++) if (b[j] !== 0) zeros = false;
    if (zeros) return -1;
  }
  // u64 fields as u32 halves: lo at +LO, hi at +HI
  const LO = le ? 0 : 4;
  const HI = le ? 4 : 0;
  let cpu = -1;
  let tHi = 0;
  let tLo = 0;
  let hasId = false;
  let idAt = 0;
  if (L?.sampleIdAll) {
    const fromEnd = view.cpuFromEnd(L);
    if (fromEnd > 0) cpu = dv.getUint32(o + size - fromEnd, le);
    if (L.trailerTimeFromEnd > 0) {
      tHi = dv.getUint32(o + size - L.trailerTimeFromEnd + HI, le);
      tLo = dv.getUint32(o + size - L.trailerTimeFromEnd + LO, le);
    }
    if (L.isPos > 0) {
      hasId = true;
      idAt = size - 8 * L.isPos;
    }
  }
  return store.push(
    tHi,
    tLo,
    cpu,
    dv.getUint32(o + 8 + HI, le),
    dv.getUint32(o + 8 + LO, le),
    b,
    20,
    oldLen,
    20 + oldLen,
    newLen,
    raw.fileOffset,
    raw.misc,
    hasId,
    hasId ? dv.getUint32(o + idAt + HI, le) : 0,
    hasId ? dv.getUint32(o + idAt + LO, le) : 0,
  );
}

/**
 * Grow the store to the pokes the whole data section will likely hold, from
 * the share read so far (at most 64× at once, and no more than the bytes left
 * could hold): one or two allocations instead of a doubling every time.
 */
function reserveAhead(store: PokeStore, raw: RawRecord, dataOffset: number, dataSize: number): void {
  const done = raw.fileOffset + raw.size - dataOffset;
  if (done <= 0) return;
  const est = Math.ceil(((store.length + 1) * dataSize * 1.05) / done);
  const room = store.length + Math.ceil((dataSize - done) / 24) + 1;
  store.reserve(Math.min(est, store.length * 64, room));
}

/** The first applied poke (apply order) with start ≤ addr < end, compared on u32 halves (no bigint per poke). */
function firstPokeIn(image: CodeImage, start: bigint, end: bigint): Poke | undefined {
  const st = image.store;
  const sHi = Number((start >> 32n) & 0xffffffffn);
  const sLo = Number(start & 0xffffffffn);
  const big = end >= 1n << 64n;
  const eHi = Number((end >> 32n) & 0xffffffffn);
  const eLo = Number(end & 0xffffffffn);
  for (let q = 0; q < image.order.length; q++) {
    const i = image.order[q]!;
    const h = st.addrHi[i]!;
    const l = st.addrLo[i]!;
    if (h < sHi || (h === sHi && l < sLo)) continue;
    if (big || h < eHi || (h === eHi && l < eLo)) return st.poke(i);
  }
  return undefined;
}

/** Throws FormatError for a malformed file, a Node fs error for a missing one. */
export async function loadMachine(input: string, opts: LoadOptions = {}): Promise<Machine> {
  const { dataFile, kcoreDir } = resolveInput(input);
  const kcore = kcoreDir ? loadKcoreDir(kcoreDir) : undefined;
  const f = await PerfFile.open(dataFile, { textPokeAbi: opts.textPokeAbi, windowSize: opts.windowSize });
  let store = new PokeStore();
  const ksymbols: KernelSymbolEvent[] = [];
  const kernelMaps: KernelMap[] = [];
  let lastTime = 0n;
  let n = 0;
  const view = new WindowView();
  const evidence = new EvidenceCollector();
  const h = f.header;
  const dataSize = f.pipe ? 0 : h.data.size;
  if (!f.pipe && h.data.size === 0 && dataFile !== '-' && h.data.offset < statSync(dataFile).size)
    evidence.truncated = {
      offset: 40,
      message: `${dataFile}: perf_file_header.data.size is 0 with records after it: perf record did not finish`,
    };
  /**
   * One batch's records into the store, the lists and the evidence. A closure
   * called per batch, not a loop inside this async function: V8 does not
   * optimise a loop in an async function while it runs (no on-stack
   * replacement into it), and this one runs once per record.
   */
  const takeBatch = (batch: RawRecord[]): void => {
    for (const raw of batch) {
      const t = raw.type;
      if (opts.onProgress && (++n & 0xfff) === 0) opts.onProgress(raw.fileOffset);
      if (t === RecordType.TEXT_POKE && opts.textPokeAbi !== 'rfc' && !opts.noFastPath) {
        if (store.length === store.capacity && dataSize > 0) reserveAhead(store, raw, h.data.offset, dataSize);
        const i = fastPoke(raw, view, store);
        if (i >= 0) {
          evidence.seenPoke(store.cpu[i]!, store.timeHi[i]!, store.timeLo[i]!);
          continue;
        }
      }
      if (t === RecordType.TEXT_POKE || (opts.textPokeAbi === 'rfc' && t === 19)) {
        const r = raw.decode();
        if (r.kind !== 'text_poke') continue;
        const time = r.sampleId?.time ?? 0n;
        store.add({
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
  };
  try {
    // batches: one promise per batch, not per record (a million pokes); the AUX data is not read (the
    // image needs none of it, and a copy per buffer grew the peak RSS with the trace)
    for await (const batch of f.recordBatches({ auxData: false })) takeBatch(batch);
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
  const pokeTime = store.maxTime();
  if (pokeTime > lastTime) lastTime = pokeTime;
  // Linux 6.1's copies exist only with two text_poke events: only then are the pokes made objects to fold
  let copies: PokeCopy[] = [];
  if (ev.textPokeEvents.length >= 2) {
    const folded = foldCopies(store.toArray(), (p) => eventOfId(ev, p.id)?.index, ev.textPokeEvents.length);
    if (folded.copies.length > 0) store = PokeStore.of(folded.unique);
    copies = folded.copies;
  }
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
    image = CodeImage.build(kcore?.segments ?? [], store);
  } catch (e) {
    if (e instanceof FormatError) throw e.withFile(dataFile);
    throw e;
  }
  const kmap = kernelMaps.find((m) => m.filename.startsWith('[kernel.kallsyms]'));
  // perf prints every poke, non-kernel cpumode ones too, and printing loads the map
  let loadAt = kmap ? firstPokeIn(image, kmap.start, kmap.end) : undefined;
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
  let pokes: Poke[] | undefined;
  return {
    dataFile,
    kcore,
    image,
    symbolizer,
    get pokes(): Poke[] {
      pokes ??= store.toArray();
      return pokes;
    },
    copies,
    evidence: ev,
    ksymbols,
    kernelMaps,
    lastTime,
    warnings,
  };
}
