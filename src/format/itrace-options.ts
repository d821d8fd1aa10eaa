/**
 * perf's `--itrace` option string (tools/perf/util/auxtrace.c
 * itrace_do_parse_synth_opts) for what decode does with Intel PT: which
 * samples to print and the instruction period. Letters perf has that decode
 * does not do are refused by name, never silently ignored.
 */
import { FormatOptionError } from './errors.js';

export type ItracePeriod =
  | { kind: 'instructions'; n: bigint }
  | { kind: 'ns'; n: bigint }
  | { kind: 'ticks'; n: bigint };

export interface ItraceSpec {
  instructions: boolean;
  branches: boolean;
  /** `c`: only calls (and async branches, trace ends) among the branches. */
  calls: boolean;
  /** `r`: only returns (and trace begins). */
  returns: boolean;
  errors: boolean;
  /** `p`: power events (psb, cbr, mwait, pwre, exstop, pwrx samples). */
  power?: boolean;
  /** Letters accepted that print nothing on what decode reads (x transactions, w ptwrite, o other). */
  quiet: string[];
  period: ItracePeriod;
  /** `s N`: skip the first N samples of each kind (perf: initial_skip). */
  skip: number;
  /** `l[N]`: last-branch entries (a branch stack of up to N, default 64) on each instruction sample; 0 = off. */
  lastBranch: number;
  /** `q` / `qq`: perf's quick decoding (1: hop from TIP/FUP to TIP/FUP, 2: leap from PSB to PSB); 0 = off. */
  quick: number;
  /** `g[N]`: a callchain of up to N entries (perf's callchain_sz, default 16) on each synthesized sample; 0 = off. */
  callchain: number;
  /** `G[N]`: callchains (callchain_sz, shared with `g`) on the recording's other events' samples; 0 = off. */
  addCallchain: number;
  /** `L[N]`: last-branch entries (last_branch_sz, shared with `l`) on the other events' samples; 0 = off. */
  addLastBranch: number;
}

/** perf's PERF_ITRACE_DEFAULT_PERIOD: 100 µs. */
const DEFAULT_PERIOD: ItracePeriod = { kind: 'ns', n: 100_000n };

const UNSUPPORTED: Record<string, string> = {
  d: 'debug log',
  f: 'flow-control events of the debug log',
  m: 'instruction-mode events of the debug log',
  t: 'timestamp events of the debug log',
  a: 'all debug-log events',
  Z: 'timestamps that ignore CYC',
  I: 'event-trace events',
  y: 'cycle samples',
  T: 'timestamps of fast-forward',
  A: 'approximate IPC',
};

/** Parse `--itrace=SPEC`. perf's defaults for an empty spec (`ibxwpe`-like) are not used: decode defaults to e. */
export function parseItrace(spec: string): ItraceSpec {
  const o: ItraceSpec = {
    instructions: false,
    branches: false,
    calls: false,
    returns: false,
    errors: false,
    quiet: [],
    period: DEFAULT_PERIOD,
    skip: 0,
    lastBranch: 0,
    quick: 0,
    callchain: 0,
    addCallchain: 0,
    addLastBranch: 0,
  };
  // perf keeps one size for g and G (callchain_sz) and one for l and L (last_branch_sz), set (to the
  // default without a number) by the last of the letters
  let chainSize = 16;
  let branchSize = 64;
  let chainLetters = '';
  let branchLetters = '';
  let i = 0;
  const num = (): string => {
    const m = /^[0-9]+/.exec(spec.slice(i));
    if (!m) return '';
    i += m[0].length;
    return m[0];
  };
  while (i < spec.length) {
    const ch = spec[i++]!;
    switch (ch) {
      case 'i': {
        o.instructions = true;
        const n = num();
        if (!n) break;
        const unit = /^(ms|us|ns|i|t|s)?/.exec(spec.slice(i))?.[1] ?? '';
        i += unit.length;
        const v = BigInt(n);
        if (unit === 'i') o.period = { kind: 'instructions', n: v };
        else if (unit === 't') o.period = { kind: 'ticks', n: v };
        else {
          const mul = unit === 's' ? 1_000_000_000n : unit === 'ms' ? 1_000_000n : unit === 'us' ? 1000n : 1n;
          o.period = { kind: 'ns', n: v * mul };
        }
        break;
      }
      case 'b':
        o.branches = true;
        break;
      case 'c':
        o.branches = true;
        o.calls = true;
        break;
      case 'r':
        o.branches = true;
        o.returns = true;
        break;
      case 'e':
        o.errors = true;
        // perf's error flags (e.g. "eo" for overflow only, "el" for lost) need the debug log's kinds
        if (spec[i] === '+' || spec[i] === '-')
          throw new FormatOptionError(`--itrace=${spec}: error flags are not supported`);
        break;
      case 'x':
      case 'w':
      case 'o':
        if (!o.quiet.includes(ch)) o.quiet.push(ch);
        break;
      case 'p':
        o.power = true;
        break;
      case 's': {
        const n = num();
        if (!n) throw new FormatOptionError(`--itrace=${spec}: 's' needs a number`);
        o.skip = Number(n);
        break;
      }
      case 'l':
      case 'L': {
        // perf's PERF_ITRACE_DEFAULT_LAST_BRANCH_SZ and PERF_ITRACE_MAX_LAST_BRANCH_SZ
        const n = num();
        branchSize = n ? Number(n) : 64;
        if (n && (!branchSize || branchSize > 1024))
          throw new FormatOptionError(`--itrace=${spec}: '${ch}' takes a size of 1 to 1024`);
        branchLetters += ch;
        break;
      }
      case 'g':
      case 'G': {
        // perf's PERF_ITRACE_DEFAULT_CALLCHAIN_SZ and PERF_ITRACE_MAX_CALLCHAIN_SZ
        const n = num();
        chainSize = n ? Number(n) : 16;
        if (n && (!chainSize || chainSize > 1024))
          throw new FormatOptionError(`--itrace=${spec}: '${ch}' takes a size of 1 to 1024`);
        chainLetters += ch;
        break;
      }
      case 'q':
        o.quick++;
        break;
      case ',':
      case ' ':
        break;
      default: {
        const what = UNSUPPORTED[ch];
        throw new FormatOptionError(
          what
            ? `--itrace=${spec}: '${ch}' (${what}) is not supported by decode`
            : `--itrace=${spec}: unknown letter '${ch}'`,
        );
      }
    }
  }
  if (branchLetters.includes('l')) o.lastBranch = branchSize;
  if (branchLetters.includes('L')) o.addLastBranch = branchSize;
  if (chainLetters.includes('g')) o.callchain = chainSize;
  if (chainLetters.includes('G')) o.addCallchain = chainSize;
  return o;
}
