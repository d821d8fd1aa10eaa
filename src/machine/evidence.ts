/**
 * What a recording can prove about its text pokes, gathered while the
 * machine is loaded (from-perf-data.ts): which events asked for TEXT_POKE
 * (attr.text_poke), the records the kernel reported lost on those events
 * (PERF_RECORD_LOST, LOST_SAMPLES, AUX records flagged truncated or
 * collision) with the window in which pokes may be missing, and whether the
 * data section was read to its end. `check` turns this into its verdict
 * (check-verdict.ts): without it, "0 stale pokes" says nothing.
 */
import { readFileFeature } from '../perfdata/file-feature.js';
import { attrFlag, type EventAttr } from '../abi/event-attr.js';
import { RecordType } from '../abi/record-type.js';
import { SampleType } from '../abi/sample-format.js';
import { Feature } from '../abi/feature.js';
import type { AttrEntry, PerfFile } from '../perfdata/perf-file.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import { defaultEventName } from '../session/event-names.js';

/** PERF_AUX_FLAG_TRUNCATED and PERF_AUX_FLAG_COLLISION (uapi perf_event.h). */
const AUX_FLAG_TRUNCATED = 0x01n;
const AUX_FLAG_COLLISION = 0x08n;

export interface RecordingEvent {
  index: number;
  name: string;
  attr: EventAttr;
  textPoke: boolean;
  ids: bigint[];
}

export type LossKind = 'lost' | 'lost_samples' | 'aux_truncated' | 'aux_collision';

export interface Loss {
  kind: LossKind;
  /** The event the loss belongs to; undefined when the file cannot tell (no id in sample_id, several events). */
  event?: RecordingEvent;
  /** Records (LOST) or samples (LOST_SAMPLES) lost; AUX: bytes of the AUX area the flag covers. */
  count: bigint;
  cpu: number;
  /** Pokes may be missing in (after, at]: after = the previous record of that event on that cpu. */
  after?: bigint;
  at?: bigint;
  fileOffset: number;
}

export interface Truncation {
  offset: number;
  message: string;
}

export interface RecordingEvidence {
  events: RecordingEvent[];
  /** Events with attr.text_poke set: the ones that carry TEXT_POKE records. */
  textPokeEvents: RecordingEvent[];
  losses: Loss[];
  /** Losses on events that carry pokes (or that cannot be attributed to an event). */
  pokeLosses: Loss[];
  /** Set when the data section could not be read to its end. */
  truncated?: Truncation;
}

function eventsOf(attrs: readonly AttrEntry[], names: readonly (string | undefined)[]): RecordingEvent[] {
  return attrs.map((a, index) => ({
    index,
    name: a.name ?? names[index] ?? defaultEventName(a.attr),
    attr: a.attr,
    textPoke: attrFlag(a.attr, 'text_poke'),
    ids: a.ids,
  }));
}

/** Collects losses record by record; `finish` needs the attrs (pipe mode learns them while reading). */
export class EvidenceCollector {
  private readonly pending: { kind: LossKind; id?: bigint; count: bigint; cpu: number; at?: bigint; off: number }[] =
    [];
  /** Last record time per cpu (index cpu + 1; -1 = no cpu in sample_id): where a loss window starts. */
  private readonly lastSeen: (bigint | undefined)[] = [];
  private readonly windowStart = new Map<number, bigint | undefined>();
  private dvBuf: ArrayBufferLike | undefined;
  private dv: DataView | undefined;
  truncated?: Truncation;

  /** Where lastSeen[c] is stale: the time is the u32 halves in pokeHi/pokeLo (a poke read without bigints). */
  private readonly fromPoke: boolean[] = [];
  private readonly pokeHi: number[] = [];
  private readonly pokeLo: number[] = [];

  /** A record on `cpu` at `time` (pokes: the loader knows both). */
  seen(cpu: number, time: bigint): void {
    this.lastSeen[cpu + 1] = time;
    this.fromPoke[cpu + 1] = false;
  }

  /** A poke on `cpu` at the time with these u32 halves: kept as numbers until a loss asks for it. */
  seenPoke(cpu: number, hi: number, lo: number): void {
    this.fromPoke[cpu + 1] = true;
    this.pokeHi[cpu + 1] = hi;
    this.pokeLo[cpu + 1] = lo;
  }

  private last(c: number): bigint | undefined {
    if (this.fromPoke[c]) return (BigInt(this.pokeHi[c]!) << 32n) | BigInt(this.pokeLo[c]!);
    return this.lastSeen[c];
  }

  /** Any other record with a time: its cpu is read in place. */
  seenRecord(raw: RawRecord, time: bigint): void {
    const c = this.cpuOf(raw) + 1;
    this.lastSeen[c] = time;
    this.fromPoke[c] = false;
  }

  private cpuOf(raw: RawRecord): number {
    const L = raw.layout;
    if (!L || (L.sampleType & SampleType.CPU) === 0n) return -1;
    if (raw.type === RecordType.SAMPLE) return -1; // SAMPLE's cpu is mid-record; its time already counts on -1
    if (raw.bytes.buffer !== this.dvBuf) {
      this.dvBuf = raw.bytes.buffer;
      this.dv = new DataView(raw.bytes.buffer);
    }
    const fromEnd = ((L.sampleType & SampleType.IDENTIFIER) !== 0n ? 8 : 0) + 8;
    if (!L.sampleIdAll || raw.size < 8 + fromEnd) return -1;
    return this.dv!.getUint32(raw.bytes.byteOffset + raw.size - fromEnd, raw.le);
  }

  /** LOST, LOST_SAMPLES and AUX records; other types are ignored. */
  observe(raw: RawRecord): void {
    const t = raw.type;
    if (t !== RecordType.LOST && t !== RecordType.LOST_SAMPLES && t !== RecordType.AUX) return;
    const r = raw.decode();
    const sid = 'sampleId' in r ? r.sampleId : undefined;
    const cpu = sid?.cpu ?? -1;
    let id = sid?.identifier ?? sid?.id;
    let kind: LossKind;
    let count: bigint;
    if (r.kind === 'lost') {
      kind = 'lost';
      count = r.lost;
      id ??= r.id;
    } else if (r.kind === 'lost_samples') {
      kind = 'lost_samples';
      count = r.lost;
    } else if (r.kind === 'aux') {
      if ((r.flags & AUX_FLAG_TRUNCATED) !== 0n) kind = 'aux_truncated';
      else if ((r.flags & AUX_FLAG_COLLISION) !== 0n) kind = 'aux_collision';
      else return;
      count = r.auxSize;
    } else return;
    this.windowStart.set(this.pending.length, this.last(cpu + 1) ?? this.last(0));
    this.pending.push({ kind, id, count, cpu, at: sid?.time, off: raw.fileOffset });
  }

  finish(attrs: readonly AttrEntry[], names: readonly (string | undefined)[] = []): RecordingEvidence {
    const events = eventsOf(attrs, names);
    const byId = new Map<bigint, RecordingEvent>();
    for (const e of events) for (const id of e.ids) byId.set(id, e);
    const losses: Loss[] = this.pending.map((p, k) => ({
      kind: p.kind,
      event: (p.id !== undefined ? byId.get(p.id) : undefined) ?? (events.length === 1 ? events[0] : undefined),
      count: p.count,
      cpu: p.cpu,
      after: this.windowStart.get(k),
      at: p.at,
      fileOffset: p.off,
    }));
    return {
      events,
      textPokeEvents: events.filter((e) => e.textPoke),
      losses,
      pokeLosses: losses.filter((l) => l.event === undefined || l.event.textPoke),
      truncated: this.truncated,
    };
  }
}

/** The event a poke came from, by its sample_id id (one event: that one). */
export function eventOfId(ev: RecordingEvidence, id: bigint | undefined): RecordingEvent | undefined {
  if (id !== undefined) for (const e of ev.events) if (e.ids.includes(id)) return e;
  return ev.events.length === 1 ? ev.events[0] : undefined;
}

/** A file-mode file's event names (HEADER_EVENT_DESC), by attr position; [] when it has none. */
export async function eventDescNames(f: PerfFile): Promise<(string | undefined)[]> {
  if (f.pipe) return [];
  const fd = await readFileFeature(f, Feature.EVENT_DESC);
  if (fd?.kind !== 'event_desc') return [];
  return f.attrs.map((a) => fd.events.find((e) => e.ids.some((id) => a.ids.includes(id)))?.name);
}
