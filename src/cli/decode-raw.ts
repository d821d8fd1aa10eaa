/**
 * `perfpoke decode --raw-pt FILE --image BIN:ADDR`: a bare Intel PT stream
 * decoded over flat images (no pokes) with libipt's semantics, printed as
 * libipt's `ptxed --no-inst` prints it (src/cli/ptxed-view.ts). The ptxed
 * options are spelled with a dash for ptxed's colon (`--event-ip` is
 * `--event:ip`, `--filter-addr0-cfg` is `--filter:addr0_cfg`), ptxed's
 * `--quiet` is `--errors-only`, its `--time` is `--insn-time`; in raw mode
 * `--cpu` is ptxed's `--cpu none|f/m[/s]`, and `--raw-pt FILE:FROM[-TO]` decodes a
 * part of the file as ptxed's `--pt FILE:FROM[-TO]` does.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from './errors.js';
import { OutputSink } from './output.js';
import { runPtxedView } from './ptxed-view.js';
import { readPtFileRange } from './pt-file-range.js';

export interface RawDecodeOptions {
  rawPt: string;
  image: string[];
  format?: string;
  cpu?: string;
  eventIp?: boolean;
  eventTime?: boolean;
  eventIflags?: boolean;
  insnDecoder?: boolean;
  blockDecoder?: boolean;
  stat?: boolean;
  statInsn?: boolean;
  statBlocks?: boolean;
  blockShowBlocks?: boolean;
  blockEndOnCall?: boolean;
  blockEndOnJump?: boolean;
  errorsOnly?: boolean;
  eventTick?: boolean;
  insnTime?: boolean;
  insnKeepTcalOnOvf?: boolean;
  blockKeepTcalOnOvf?: boolean;
  resyncOnError?: boolean;
  offset?: boolean;
}

/** ptxed's options that take a value, as `decode` spells them (commander key, ptxed option). */
const VALUE_OPTIONS: [flag: string, key: string, ptxed: string, help: string][] = [
  ['--mtc-freq', 'mtcFreq', '--mtc-freq', 'the MTC frequency (IA32_RTIT_CTL[17:14])'],
  ['--nom-freq', 'nomFreq', '--nom-freq', 'the nominal frequency (MSR_PLATFORM_INFO[15:8])'],
  ['--cpuid-0x15-eax', 'cpuid0x15Eax', '--cpuid-0x15.eax', 'cpuid[0x15].eax'],
  ['--cpuid-0x15-ebx', 'cpuid0x15Ebx', '--cpuid-0x15.ebx', 'cpuid[0x15].ebx'],
  ...[0, 1, 2, 3].flatMap((n): [string, string, string, string][] => [
    [`--filter-addr${n}-cfg`, `filterAddr${n}Cfg`, `--filter:addr${n}_cfg`, `IA32_RTIT_CTL.ADDR${n}_CFG`],
    [`--filter-addr${n}-a`, `filterAddr${n}A`, `--filter:addr${n}_a`, `IA32_RTIT_ADDR${n}_A`],
    [`--filter-addr${n}-b`, `filterAddr${n}B`, `--filter:addr${n}_b`, `IA32_RTIT_ADDR${n}_B`],
  ]),
];

/** The raw-mode options of `decode` (ptxed's, with `-` for `:`). */
export function rawDecodeOptions(cmd: Command): void {
  cmd
    .option('--event-ip', "raw mode: print the IP of events (ptxed's --event:ip)")
    .option('--event-time', "raw mode: print the TSC of events (ptxed's --event:time)")
    .option('--event-iflags', "raw mode: report interrupt flag changes (ptxed's --event:iflags)")
    .option('--insn-decoder', "raw mode: ptxed's instruction flow decoder (no blocks)")
    .option('--block-decoder', "raw mode: ptxed's block decoder (its default)")
    .option('--block-show-blocks', "raw mode: a [block] line before each block (ptxed's --block:show-blocks)")
    .option('--block-end-on-call', "raw mode: end blocks after direct calls (ptxed's --block:end-on-call)")
    .option('--block-end-on-jump', "raw mode: end blocks after direct jumps (ptxed's --block:end-on-jump)")
    .option('--stat', "raw mode: print statistics (ptxed's --stat)")
    .option('--stat-insn', "raw mode: print the instruction count (ptxed's --stat:insn)")
    .option('--stat-blocks', "raw mode: print the block count (ptxed's --stat:blocks)")
    .option('--errors-only', "raw mode: print errors and statistics only (ptxed's --quiet)")
    .option('--event-tick', "raw mode: report tick events when the time changes (ptxed's --event:tick)")
    .option('--insn-time', "raw mode: print the decoder's time before each instruction (ptxed's --time)")
    .option('--insn-keep-tcal-on-ovf', "raw mode: keep the time calibration on overflow (ptxed's --insn:…)")
    .option('--block-keep-tcal-on-ovf', "raw mode: the same for the block decoder (ptxed's --block:…)")
    .option('--resync-on-error', "raw mode: after an error go on at the packet that failed (ptxed's --resync-on-error)")
    .option('--offset', "raw mode: print the trace offset before each instruction and event (ptxed's --offset)");
  for (const [flag, , ptxed, help] of VALUE_OPTIONS) cmd.option(`${flag} <n>`, `raw mode: ${help} (ptxed's ${ptxed})`);
}

export async function decodeRaw(o: RawDecodeOptions): Promise<void> {
  if (o.format !== 'ptxed')
    throw new UsageError(`--format: only "ptxed" is supported in raw mode, got ${JSON.stringify(o.format)}`);
  if (!o.image.length) throw new UsageError('raw mode needs at least one --image BIN:ADDR');
  const segs = o.image.map((spec) => {
    const i = spec.lastIndexOf(':');
    if (i <= 0) throw new UsageError(`--image ${JSON.stringify(spec)}: expected FILE:ADDR`);
    let addr: bigint;
    try {
      addr = BigInt(spec.slice(i + 1));
    } catch {
      throw new UsageError(`--image ${JSON.stringify(spec)}: ${spec.slice(i + 1)} is not an address`);
    }
    return { addr, bytes: new Uint8Array(readFileSync(spec.slice(0, i))) };
  });
  const args: string[] = [];
  if (o.insnDecoder) args.push('--insn-decoder');
  if (o.blockDecoder) args.push('--block-decoder');
  if (o.eventIp) args.push('--event:ip');
  if (o.eventTime) args.push('--event:time');
  if (o.eventIflags) args.push('--event:iflags');
  if (o.stat) args.push('--stat');
  if (o.statInsn) args.push('--stat:insn');
  if (o.statBlocks) args.push('--stat:blocks');
  if (o.blockShowBlocks) args.push('--block:show-blocks');
  if (o.blockEndOnCall) args.push('--block:end-on-call');
  if (o.blockEndOnJump) args.push('--block:end-on-jump');
  if (o.errorsOnly) args.push('--quiet');
  if (o.cpu !== undefined) args.push('--cpu', o.cpu);
  if (o.eventTick) args.push('--event:tick');
  if (o.insnTime) args.push('--time');
  if (o.insnKeepTcalOnOvf) args.push('--insn:keep-tcal-on-ovf');
  if (o.blockKeepTcalOnOvf) args.push('--block:keep-tcal-on-ovf');
  if (o.resyncOnError) args.push('--resync-on-error');
  if (o.offset) args.push('--offset');
  // (the value options are commander's dynamic keys, named in VALUE_OPTIONS)
  const values: Record<string, unknown> = { ...o };
  for (const [, key, ptxed] of VALUE_OPTIONS) {
    const v = values[key];
    if (typeof v === 'string') args.push(ptxed, v);
  }
  const trace = readPtFileRange(o.rawPt);
  const r = runPtxedView(trace, segs, args);
  const out = new OutputSink(undefined, { sync: true });
  out.write(r.stdout);
  await out.close();
  process.stderr.write(`${r.errors} instruction trace errors\n`);
}
