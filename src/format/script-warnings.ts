/**
 * The warnings `perf script` 6.1 writes to stderr once the whole file is read
 * (session.c perf_session__warn_about_errors, stdio ui__warning: "Warning:\n"
 * then the text), from counts kept while the records pass:
 * - LOST records (unless --show-lost-events, whose handler replaces perf's
 *   default one): `Processed <all records> events and lost <LOST records> chunks!`
 * - LOST_SAMPLES above 5% of samples: `Processed <samples + lost> samples and lost <p>%!`
 * - AUX records flagged truncated / partial / collision
 * - samples whose id no attr has
 * - records the ordered queue received older than what it had already
 *   delivered: `<n> out of order events recorded.` (none when an event writes
 *   its ring buffer backward).
 * "All records" counts every record read, COMPRESSED ones and their contents
 * alike (perf's nr_events[0], the TOTAL of `perf report --stats`).
 */
import { attrFlag } from '../abi/event-attr.js';
import { RecordType } from '../abi/record-type.js';
import type { RawRecord } from '../perfdata/index.js';
import type { Session } from '../session/session.js';

const PERF_AUX_FLAG_TRUNCATED = 0x01n;
const PERF_AUX_FLAG_PARTIAL = 0x04n;
const PERF_AUX_FLAG_COLLISION = 0x08n;

export class ScriptWarnings {
  private records = 0;
  private samples = 0;
  private lost = 0;
  private lostSamples = 0n;
  private auxLost = 0;
  private auxPartial = 0;
  private auxCollision = 0;
  private auxRecords = 0;
  private unknownId = 0;

  constructor(private readonly s: Session) {}

  /** Count one delivered record. */
  count(raw: RawRecord): void {
    this.records++;
    switch (raw.type) {
      case RecordType.SAMPLE:
        this.samples++;
        if (this.s.attrIndexOf(raw) < 0) this.unknownId++;
        return;
      case RecordType.LOST:
        this.lost++;
        return;
      case RecordType.LOST_SAMPLES: {
        const rec = raw.decode();
        if (rec.kind === 'lost_samples') this.lostSamples += rec.lost;
        return;
      }
      case RecordType.AUX: {
        this.auxRecords++;
        const rec = raw.decode();
        if (rec.kind !== 'aux') return;
        if (rec.flags & PERF_AUX_FLAG_TRUNCATED) this.auxLost++;
        if (rec.flags & PERF_AUX_FLAG_PARTIAL) this.auxPartial++;
        if (rec.flags & PERF_AUX_FLAG_COLLISION) this.auxCollision++;
        return;
      }
      default:
        return;
    }
  }

  /** perf's warnings for what was counted, "" when there is none. */
  text(opts: { showLostEvents?: boolean }): string {
    const w: string[] = [];
    const total = this.records + [...this.s.file.compressedCounts.values()].reduce((a, b) => a + b, 0);
    if (!opts.showLostEvents && this.lost !== 0)
      w.push(`Processed ${total} events and lost ${this.lost} chunks!\n\nCheck IO/CPU overload!\n\n`);
    const seen = BigInt(this.samples) + this.lostSamples;
    const dropRate = Number(this.lostSamples) / Number(seen);
    if (dropRate > 0.05) w.push(`Processed ${seen} samples and lost ${(dropRate * 100).toFixed(2)}%!\n\n`);
    const aux = this.auxRecords;
    if (this.auxLost) w.push(`AUX data lost ${this.auxLost} times out of ${aux}!\n\n`);
    if (this.auxPartial) {
      w.push(
        `AUX data had gaps in it ${this.auxPartial} times out of ${aux}!\n\n` +
          'Are you running a KVM guest in the background?\n\n',
      );
    }
    if (this.auxCollision) w.push(`AUX data detected collision  ${this.auxCollision} times out of ${aux}!\n\n`);
    if (this.unknownId) w.push(`${this.unknownId} samples with id not present in the header\n`);
    const unordered = this.s.queueStats?.unordered ?? 0;
    const backward = this.s.file.attrs.some((a) => attrFlag(a.attr, 'write_backward'));
    if (unordered && !backward) w.push(`${unordered} out of order events recorded.\n`);
    return w.map((t) => `Warning:\n${t}`).join('');
  }
}
