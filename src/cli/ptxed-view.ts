/**
 * The ptxed view of a raw PT stream: libipt's `ptxed --no-inst` options
 * (spelled as ptxed spells them) applied to the libipt-semantics decoder
 * (src/intelpt/ptxed) and its text (src/format/ptxed.ts). `decode --raw-pt`
 * and the tests call it; it returns what ptxed prints on stdout.
 */
import { cpuErrata, NO_ERRATA, parseCpu, type Errata } from '../intelpt/cpu.js';
import { decodePtxed } from '../intelpt/ptxed/insn-walk.js';
import { UsageError } from './errors.js';
import {
  blockView,
  insnView,
  type FlatSegment,
  PTXED_BLOCK_OPTIONS,
  PTXED_STAT_OPTIONS,
  statLines,
} from './ptxed-view-blocks.js';
import { applyPtxedConfigOption, isPtxedConfigOption } from './ptxed-config-options.js';
import { newAddrFilter } from '../intelpt/ptxed/addr-filter.js';

export type { FlatSegment } from './ptxed-view-blocks.js';

/** ptxed options the view supports; anything else is refused by name. */
export const PTXED_VIEW_OPTIONS = [
  '--insn-decoder',
  '--block-decoder',
  '--event:ip',
  '--event:time',
  '--event:iflags',
  '--event:tick',
  '--time',
  '--insn:keep-tcal-on-ovf',
  '--block:keep-tcal-on-ovf',
  '--cpu',
  '--quiet',
  '-q',
  '--resync-on-error',
  '--offset',
  ...PTXED_STAT_OPTIONS,
  ...PTXED_BLOCK_OPTIONS,
] as const;

export function runPtxedView(
  trace: Uint8Array,
  segs: readonly FlatSegment[],
  args: readonly string[],
): { stdout: string; instructions: number; errors: number } {
  const lines: string[] = [];
  let errata: Errata = NO_ERRATA;
  const flags = new Set<string>();
  let blockDecoder = true;
  const timing = { mtcFreq: 0, nomFreq: 0, cpuid15Eax: 0, cpuid15Ebx: 0 };
  const filter = newAddrFilter();
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (isPtxedConfigOption(a)) {
      applyPtxedConfigOption(a, args[++i], timing, filter);
      continue;
    }
    if (a === '--cpu') {
      const v = args[++i] ?? '';
      if (v === 'none') {
        errata = NO_ERRATA;
        continue;
      }
      const cpu = parseCpu(v);
      if (!cpu) throw new UsageError('--cpu: cpu must be specified as f/m[/s]');
      const e = cpuErrata(cpu);
      // ptxed reports an unknown model and decodes by the spec
      if (!e) lines.push('[0, 0: config error: unknown cpu]');
      errata = e ?? NO_ERRATA;
      continue;
    }
    if (!(PTXED_VIEW_OPTIONS as readonly string[]).includes(a))
      throw new UsageError(`ptxed option ${a} is not supported by the ptxed view`);
    if (a === '--insn-decoder' || a === '--block-decoder') blockDecoder = a === '--block-decoder';
    flags.add(a === '-q' ? '--quiet' : a);
  }
  const quiet = flags.has('--quiet');
  const read = (addr: bigint, len: number): Uint8Array | undefined => {
    for (const s of segs) {
      if (addr >= s.addr && addr < s.addr + BigInt(s.bytes.length)) {
        const o = Number(addr - s.addr);
        return s.bytes.subarray(o, Math.min(s.bytes.length, o + len));
      }
    }
    return undefined;
  };
  const text = {
    eventIp: flags.has('--event:ip'),
    eventTime: flags.has('--event:time'),
    time: flags.has('--time'),
    offset: flags.has('--offset'),
    quiet,
  };
  const line = (l: string): void => {
    lines.push(l);
  };
  const sink = blockDecoder ? blockView(line, segs, flags, text) : insnView(line, segs, text);
  const r = decodePtxed(trace, read, sink, {
    errata,
    timing,
    filter,
    iflags: flags.has('--event:iflags'),
    tick: flags.has('--event:tick'),
    resyncOnError: flags.has('--resync-on-error'),
    // each decoder has its own flag; the one of the other decoder is ignored, as ptxed does
    keepTcalOnOvf: flags.has(blockDecoder ? '--block:keep-tcal-on-ovf' : '--insn:keep-tcal-on-ovf'),
  });
  sink.flush();
  lines.push(...statLines(flags, blockDecoder, blockDecoder ? sink.instructions : r.instructions, sink.blocks));
  return { stdout: lines.map((l) => `${l}\n`).join(''), ...r };
}
