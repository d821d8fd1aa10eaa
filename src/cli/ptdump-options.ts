/**
 * Intel ptdump 2.3's options for `pt-dump --format=ptdump`, spelled as
 * ptdump spells them (its `--raw` is `--raw-bytes` here, as `--raw` already
 * says the input is a raw PT stream; its `--quiet` is perfpoke's `--quiet`).
 * They are collected from commander's option events, in command-line order,
 * so flag pairs ptdump allows together (`--tcal --no-tcal`) and its checks
 * (`--time` with `--tcal`) behave as in ptdump.
 */
import type { Command } from 'commander';
import { parseCpu } from '../intelpt/cpu.js';
import type { PtdumpOptions } from '../format/pt-packets-ptdump.js';
import { UsageError } from './errors.js';

type Flag = Exclude<keyof PtdumpOptions, 'cpu' | 'mtcFreq' | 'nomFreq' | 'cpuid15Eax' | 'cpuid15Ebx' | 'dialect'>;

const FLAGS: [option: string, key: Flag, help: string][] = [
  ['--no-sync', 'noSync', "don't sync to the first PSB, assume a sync point at the start"],
  ['--no-pad', 'noPad', "don't show PAD packets"],
  ['--no-timing', 'noTiming', "don't show timing packets"],
  ['--no-cyc', 'noCyc', "don't show CYC packets and ignore them when tracking time"],
  ['--no-offset', 'noOffset', "don't show the offset as the first column"],
  ['--raw-bytes', 'rawBytes', "show raw packet bytes (ptdump's --raw)"],
  ['--lastip', 'lastIp', 'show last IP updates on packets with IP payloads'],
  ['--exec-mode', 'execMode', 'show the current execution mode on mode.exec packets'],
  ['--time', 'time', 'show the estimated TSC on timing packets'],
  ['--tcal', 'tcal', 'show time calibration information'],
  ['--time-delta', 'timeDelta', 'show timing information as delta'],
  ['--no-tcal', 'noTcal', 'skip timing calibration (CYC packets then give errors)'],
  ['--no-wall-clock', 'noWallClock', 'suppress the no-time error and print relative time'],
  ['--keep-tcal-on-ovf', 'keepTcalOnOvf', 'preserve timing calibration on overflow'],
];

const NUMBERS: [option: string, key: 'mtcFreq' | 'nomFreq' | 'cpuid15Eax' | 'cpuid15Ebx', max: number, help: string][] =
  [
    ['--mtc-freq', 'mtcFreq', 0xff, 'the MTC frequency (IA32_RTIT_CTL[17:14])'],
    ['--nom-freq', 'nomFreq', 0xff, 'the nominal frequency (MSR_PLATFORM_INFO[15:8])'],
    ['--cpuid-0x15.eax', 'cpuid15Eax', 0xffffffff, 'the value of cpuid[0x15].eax'],
    ['--cpuid-0x15.ebx', 'cpuid15Ebx', 0xffffffff, 'the value of cpuid[0x15].ebx'],
  ];

/** ptdump's get_arg_uint*: a C integer literal (strtoull base 0) no bigger than `max`. */
function cNumber(option: string, v: string, max: number): number {
  const m = /^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.exec(v);
  if (!m) throw new UsageError(`${option}: bad argument: ${v}`);
  const n = /^0[xX]/.test(v) ? Number.parseInt(v.slice(2), 16) : v.startsWith('0') ? Number.parseInt(v || '0', 8) : +v;
  if (n > max) throw new UsageError(`${option}: value too big: ${v}`);
  return n;
}

/** The options given and their errors, filled while commander parses. */
export interface PtdumpArgs {
  opts: PtdumpOptions;
  /** The ptdump options given (to reject them with another format). */
  given: string[];
  errors: string[];
}

/** Declares ptdump's options on `cmd`; the returned object fills in as commander parses. */
export function ptdumpOptions(cmd: Command): PtdumpArgs {
  const a: PtdumpArgs = { opts: {}, given: [], errors: [] };
  const note = (option: string, f: () => void): void => {
    a.given.push(option);
    try {
      f();
    } catch (e) {
      a.errors.push(e instanceof Error ? e.message : String(e));
    }
  };
  for (const [option, key, help] of FLAGS) {
    cmd.option(option, `ptdump: ${help}`);
    cmd.on(`option:${option.slice(2)}`, () =>
      note(option, () => {
        if ((key === 'time' && a.opts.tcal) || (key === 'tcal' && a.opts.time))
          throw new UsageError('specify either --time or --tcal');
        a.opts[key] = true;
      }),
    );
  }
  for (const [option, key, max, help] of NUMBERS) {
    cmd.option(`${option} <n>`, `ptdump: set ${help} to <n>`);
    cmd.on(`option:${option.slice(2)}`, (v: string) => note(option, () => (a.opts[key] = cNumber(option, v, max))));
  }
  cmd.option('--cpu <cpu>', 'ptdump: none|f/m[/s]: decode with the errata of family/model[/stepping]');
  cmd.on('option:cpu', (v: string) =>
    note('--cpu', () => {
      if (v === 'none') a.opts.cpu = undefined;
      else a.opts.cpu = parseCpu(v) ?? throwUsage('--cpu: cpu must be specified as f/m[/s]');
    }),
  );
  return a;
}

function throwUsage(message: string): never {
  throw new UsageError(message);
}

/**
 * ptdump's `FILE[:from[-to]]` (its preprocess_filename): a trailing range
 * that parses as C integers is split off; otherwise the ':' belongs to the
 * name. `to` is exclusive; `to <= from` is refused as ptdump refuses it.
 */
export function splitFileRange(arg: string): { path: string; from: number; to?: number } {
  const colon = arg.lastIndexOf(':');
  if (colon < 0) return { path: arg, from: 0 };
  const lit = '(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)';
  const m = new RegExp(`^${lit}(?:-${lit})?$`).exec(arg.slice(colon + 1));
  if (!m?.[1]) return { path: arg, from: 0 };
  const num = (s: string): number => cNumber('range', s, Number.MAX_SAFE_INTEGER);
  const path = arg.slice(0, colon);
  const from = num(m[1]);
  if (m[2] === undefined) return { path, from };
  const to = num(m[2]);
  if (to <= from) throw new UsageError(`bad file ${path}: invalid argument`);
  return { path, from, to };
}

/** The bytes of a `FILE[:from[-to]]` range, with ptdump's checks. */
export function sliceRange(bytes: Uint8Array, r: { path: string; from: number; to?: number }): Uint8Array {
  if (r.from === 0 && r.to === undefined) return bytes;
  if (r.from >= bytes.length) throw new UsageError(`bad offset 0x${r.from.toString(16)} into ${r.path}`);
  if (r.to !== undefined && r.to > bytes.length) throw new UsageError(`bad range 0x${r.to.toString(16)} in ${r.path}`);
  return bytes.subarray(r.from, r.to);
}
