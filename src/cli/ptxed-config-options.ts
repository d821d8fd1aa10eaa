/**
 * ptxed 2.3's options that set its `struct pt_config` (ptxed.c
 * get_arg_uint*): the timing configuration (`--mtc-freq`, `--nom-freq`,
 * `--cpuid-0x15.eax/ebx`) and the address filter registers
 * (`--filter:addrN_cfg/_a/_b`, N = 0..3), with ptxed's checks and messages.
 */
import type { TimingConfig } from '../intelpt/timing.js';
import type { AddrFilter } from '../intelpt/ptxed/addr-filter.js';
import { UsageError } from './errors.js';

const U64_MAX = (1n << 64n) - 1n;

/** A C integer literal (strtoull base 0) no bigger than `max`, as ptxed's get_arg_uint* checks it. */
function cInteger(option: string, v: string | undefined, max: bigint): bigint {
  const s = v ?? '';
  const m = /^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) throw new UsageError(`${option}: bad argument: ${s}`);
  const n = /^0[xX]/.test(s) ? BigInt(s) : s.startsWith('0') ? BigInt(`0o${s.slice(1) || '0'}`) : BigInt(s);
  if (n > U64_MAX) throw new UsageError(`${option}: bad argument: ${s}`);
  if (n > max) throw new UsageError(`${option}: value too big: ${s}`);
  return n;
}

const TIMING: Record<string, [key: keyof Omit<TimingConfig, 'skl168'>, max: bigint]> = {
  '--mtc-freq': ['mtcFreq', 0xffn],
  '--nom-freq': ['nomFreq', 0xffn],
  '--cpuid-0x15.eax': ['cpuid15Eax', 0xffffffffn],
  '--cpuid-0x15.ebx': ['cpuid15Ebx', 0xffffffffn],
};

/** The ptxed configuration options taking a value. */
export function isPtxedConfigOption(a: string): boolean {
  return a in TIMING || /^--filter:addr[0-3]_(cfg|a|b)$/.test(a);
}

/** Apply `option value` to the timing or filter configuration. */
export function applyPtxedConfigOption(
  option: string,
  value: string | undefined,
  timing: TimingConfig,
  filter: AddrFilter,
): void {
  const t = TIMING[option];
  if (t) {
    timing[t[0]] = Number(cInteger(option, value, t[1]));
    return;
  }
  const m = /^--filter:addr([0-3])_(cfg|a|b)$/.exec(option);
  const n = Number(m?.[1] ?? 0);
  const r = filter.ranges[n];
  if (!m || !r) throw new UsageError(`unknown option: ${option}`);
  if (m[2] === 'cfg') r.cfg = Number(cInteger(option, value, 0xfn));
  else if (m[2] === 'a') r.a = cInteger(option, value, U64_MAX);
  else r.b = cInteger(option, value, U64_MAX);
}
