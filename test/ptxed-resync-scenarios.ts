/**
 * Generated PT scenarios with decode errors, for ptxed's `--resync-on-error`
 * and `--offset` (test/ptxed-resync-libipt23.test.ts), over the loop image
 * of test/ptxed-scenarios.ts (six `jz +0` and a `jmp *%rax` back to 0x1000).
 * Each scenario is whole passes through the loop with a fault put in one
 * (or two) of them; the kinds place the fault against the PSBs:
 * - `error, PSBs after`: a fault, then several PSB+ (each with the FUP of the loop's start);
 * - `error before the last PSB`: the fault in the pass right before the last PSB+;
 * - `error, no later PSB`: no PSB+ after the fault;
 * - `overflow, then error`: an OVF (resumed at a FUP, or not), then a fault;
 * - `two errors`: two faults, a PSB+ between them or not.
 * Faults: a TIP where a TNT bit is due, TNT bits too many or too few before
 * the TIP, the TIP lost, a TNT after tracing was disabled, an OVF without a
 * FUP followed by TNT, a byte that is no packet. The steps follow
 * test/pt-scenario.ts.
 */
import fc from 'fast-check';
import { BASE } from './ptxed-scenarios.js';

const hx = (v: number): string => `0x${v.toString(16)}`;
const tnt = (n: number, bits: number): string[] => (n > 0 ? [`tnt.8 ${n} ${bits & ((1 << n) - 1)}`] : []);
const bits = fc.integer({ min: 0, max: 63 });
const k = fc.integer({ min: 0, max: 6 });

/** A whole pass through the loop: six TNT bits and the TIP back to the start. */
const pass = bits.map((b) => [...tnt(6, b), `tip 3 ${hx(BASE)}`]);
const passes = (min: number, max: number): fc.Arbitrary<string[]> =>
  fc.array(pass, { minLength: min, maxLength: max }).map((p) => p.flat());
const psb = ['psb', 'mode.exec 1 0', `fup 3 ${hx(BASE)}`, 'psbend'];
/** A PSB+ and the passes after it. */
const psbThenPasses = passes(1, 2).map((p) => [...psb, ...p]);

/** A pass with a fault at instruction k: what the trace says there does not fit the code. */
const fault: fc.Arbitrary<string[]> = fc.oneof(
  // a TIP where a TNT bit is due
  fc
    .tuple(k, bits, bits)
    .map(([i, a, b]) => [...tnt(i, a), `tip 3 ${hx(BASE)}`, ...tnt(6 - i, b), `tip 3 ${hx(BASE)}`]),
  // TNT bits too many before the TIP (libipt looks past them for the TIP)
  fc
    .tuple(bits, fc.integer({ min: 1, max: 5 }), bits)
    .map(([a, n, b]) => [...tnt(6, a), ...tnt(n, b), `tip 3 ${hx(BASE)}`]),
  // too few
  fc.tuple(fc.integer({ min: 1, max: 5 }), bits).map(([n, a]) => [...tnt(n, a), `tip 3 ${hx(BASE)}`]),
  // the TIP lost
  bits.map((a) => tnt(6, a)),
  // tracing disabled at the jmp, then a TNT
  fc.tuple(bits, bits).map(([a, b]) => [...tnt(6, a), 'tip.pgd 0 0', ...tnt(2, b), `tip.pge 3 ${hx(BASE)}`]),
  // an overflow without a FUP, then TNT
  fc.tuple(k, bits, bits).map(([i, a, b]) => [...tnt(i, a), 'ovf', ...tnt(3, b), `tip 3 ${hx(BASE)}`]),
  // a byte that is no packet
  fc.tuple(k, bits).map(([i, a]) => [...tnt(i, a), 'raw 02 ff']),
);

/** An overflow: resumed at the loop's start by a FUP, or not (tracing off until a TIP.PGE). */
const overflow = fc.boolean().map((fup) => (fup ? ['ovf', `fup 3 ${hx(BASE)}`] : ['ovf', `tip.pge 3 ${hx(BASE)}`]));

export const RESYNC_KINDS = {
  'error, PSBs after': fc
    .tuple(passes(0, 2), fault, passes(0, 2), fc.array(psbThenPasses, { minLength: 2, maxLength: 3 }))
    .map(([a, f, b, p]) => [...a, ...f, ...b, ...p.flat()]),
  'error before the last PSB': fc
    .tuple(passes(0, 1), fc.option(psbThenPasses, { nil: undefined }), fault, psbThenPasses)
    .map(([a, p, f, l]) => [...a, ...(p ?? []), ...f, ...l]),
  'error, no later PSB': fc
    .tuple(passes(0, 2), fault, passes(0, 2), fc.boolean())
    .map(([a, f, b, cbr]) => [...a, ...f, ...(cbr ? ['cbr 9'] : []), ...b]),
  'overflow, then error': fc
    .tuple(passes(0, 1), overflow, passes(0, 1), fault, passes(0, 1), fc.option(psbThenPasses, { nil: undefined }))
    .map(([a, o, b, f, c, p]) => [...a, ...o, ...b, ...f, ...c, ...(p ?? [])]),
  'two errors': fc
    .tuple(passes(0, 1), fault, fc.option(psbThenPasses, { nil: undefined }), fault, passes(0, 2))
    .map(([a, f, p, g, b]) => [...a, ...f, ...(p ?? []), ...g, ...b]),
};

export type ResyncKind = keyof typeof RESYNC_KINDS;

/** A scenario of `kind`: PSB+ and TIP.PGE at the loop's start, the body, the last pass's TIP.PGD. */
export function resyncScenario(kind: ResyncKind): fc.Arbitrary<string[]> {
  const head = ['psb', 'mode.exec 1 0', 'psbend', `tip.pge 3 ${hx(BASE)}`];
  return fc.tuple(RESYNC_KINDS[kind], bits).map(([body, b]) => [...head, ...body, ...tnt(6, b), 'tip.pgd 0 0']);
}
