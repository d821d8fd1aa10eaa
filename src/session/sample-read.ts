/**
 * PERF_SAMPLE_READ delivery (perf 6.1 session.c evlist__deliver_sample,
 * deliver_sample_value, deliver_sample_group): a sample that carries counter
 * values is handed to the tool once per value, as a sample of the event that
 * owns the value's id, with period = value − the previous value of that id.
 * Values with an unknown id (perf's nr_unknown_id) or a zero delta are not
 * delivered. This is how `-e '{a,b}:S'` shows samples of both a and b.
 */
import { ReadFormat, SampleType } from '../abi/sample-format.js';
import type { EventAttr } from '../abi/event-attr.js';
import type { SampleRecord } from '../perfdata/index.js';
import type { Session } from './session.js';

export interface SampleDelivery {
  /** Index into file.attrs of the event the sample is delivered as. */
  attrIndex: number;
  period: bigint;
}

export class SampleReadSplitter {
  /** perf's sid->period: last value seen per id. */
  private readonly last = new Map<bigint, bigint>();
  private readonly s: Session;
  unknownId = 0;

  constructor(s: Session) {
    this.s = s;
  }

  /** Whether samples of this attr go through split() (PERF_SAMPLE_READ). */
  static applies(attr: EventAttr): boolean {
    return (attr.sampleType & SampleType.READ) !== 0n;
  }

  /** The deliveries of one PERF_SAMPLE_READ sample, in perf's order. */
  split(rec: SampleRecord, attr: EventAttr): SampleDelivery[] {
    const out: SampleDelivery[] = [];
    const values = rec.read?.values ?? [];
    const group = (attr.readFormat & ReadFormat.GROUP) !== 0n;
    for (const v of group ? values : values.slice(0, 1)) {
      const entry = v.id !== undefined ? this.s.file.attrForId(v.id) : undefined;
      if (v.id === undefined || !entry) {
        this.unknownId++;
        continue;
      }
      const prev = this.last.get(v.id) ?? 0n;
      this.last.set(v.id, v.value);
      const period = BigInt.asUintN(64, v.value - prev);
      if (period === 0n) continue;
      out.push({ attrIndex: this.s.file.attrs.indexOf(entry), period });
    }
    return out;
  }
}
