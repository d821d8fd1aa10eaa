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
