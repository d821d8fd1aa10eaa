/**
 * Generated PT scenarios for the ptxed options that change how a trace is
 * decoded rather than which events it has: `--time` / `--event:tick` (timing
 * packets between the TNT and TIP packets of the loop), `--resync-on-error`
 * (traces that go wrong mid-way, with PSBs after), and the address filter
 * (`--filter:addrN_*`, which libipt uses for SKL014). They run over the image
 * of test/ptxed-scenarios.ts, or FILTER_IMAGE for the filter family.
 */
import fc from 'fast-check';
import { BASE } from './ptxed-scenarios.js';

/**
 * The image of the filter family, at BASE: `jz +0; jz +0; call 0x2000;
 * jmp *%rax` at 0x1000 and `jz +0; jmp 0x2006; nop; nop; ret` at 0x2000
 * (nops between), so a direct call and a direct jump leave the region
 * [0x1000, 0x1fff] and come back by a return.
 */
export const FILTER_IMAGE = ((): Uint8Array => {
  const img = new Uint8Array(0x1010).fill(0x90);
  img.set([0x74, 0x00, 0x74, 0x00, 0xe8, 0xf7, 0x0f, 0x00, 0x00, 0xff, 0xe0], 0);
  img.set([0x74, 0x00, 0xeb, 0x02, 0x90, 0x90, 0xc3], 0x1000);
  return img;
})();

const hx = (v: number | bigint): string => `0x${v.toString(16)}`;
const head = ['psb', 'mode.exec 1 0', 'tsc 0x100', 'psbend', `tip.pge 3 ${hx(BASE)}`];

/** A timing packet (TSC values grow so that time moves forward). */
const timingPacket = (tsc: number): fc.Arbitrary<string> =>
  fc.constantFrom(`tsc ${hx(tsc)}`, 'mtc 3', 'mtc 9', 'cyc 5', 'cyc 300', 'cbr 12', 'tma 0x12 0x40', 'pad');

/** One pass of the loop: its 6 TNT bits cut in 1–3 packets, timing packets before some, then the TIP. */
function timedPass(n: number): fc.Arbitrary<string[]> {
  return fc
    .tuple(
      fc.integer({ min: 0, max: 63 }),
      fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 2 }),
      fc.array(fc.option(timingPacket(0x1000 * (n + 2)), { nil: undefined }), { minLength: 4, maxLength: 4 }),
    )
    .map(([bits, cuts, timing]) => {
      const at = [0, ...cuts.sort((a, b) => a - b), 6];
      const out: string[] = [];
      for (let i = 0; i + 1 < at.length; i++) {
        const t = timing[i];
        if (t) out.push(t);
        const from = at[i] ?? 0;
        const to = at[i + 1] ?? 6;
        out.push(`tnt.8 ${to - from} ${(bits >> (6 - to)) & ((1 << (to - from)) - 1)}`);
      }
      const t = timing[3];
      if (t) out.push(t);
      out.push(`tip 3 ${hx(BASE)}`);
      return out;
    });
}

export const OPTION_KINDS = {
  /** Timing packets all through the flow: what --time prints and where --event:tick ticks. */
  'time, tick': fc
    .tuple(timedPass(0), timedPass(1), timedPass(2), fc.boolean())
    .map(([a, b, c, psb]) => [
      ...head,
      ...a,
      ...b,
      ...(psb ? ['psb', 'mode.exec 1 0', 'tsc 0x9000', `fup 3 ${hx(BASE)}`, 'psbend'] : []),
      ...c,
      'tnt.8 6 0',
      'tsc 0x20000',
      'tip.pgd 0 0',
    ]),
  /**
   * An overflow between passes timed by MTC and CYC: after it, CYC gives time
   * only with a calibration, which `--insn:keep-tcal-on-ovf` (or the block
   * decoder's flag) keeps.
   */
  'overflow, time': fc
    .tuple(timedPass(0), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 63 }), timedPass(1))
    .map(([a, cyc, bits, b]) => [
      ...head,
      'cbr 10',
      'mtc 1',
      `cyc ${cyc}`,
      'mtc 2',
      ...a,
      `cyc ${cyc}`,
      'mtc 3',
      'ovf',
      `fup 3 ${hx(BASE)}`,
      `cyc ${cyc}`,
      `tnt.8 6 ${bits}`,
      `cyc ${cyc * 2}`,
      `tip 3 ${hx(BASE)}`,
      ...b,
      'tnt.8 6 0',
      'tip.pgd 0 0',
    ]),
  /**
   * Tracing disabled (TIP.PGD, with or without its IP) somewhere along the
   * call into 0x2000 and back, then enabled again: where libipt binds the
   * PGD depends on the address filter and SKL014 (test with --filter:addrN_*).
   */
  'filter, disable': fc
    .tuple(
      fc.constantFrom('after call', 'after jz', 'at ret'),
      fc.boolean(),
      fc.boolean(),
      fc.constantFrom('0x1000', '0x2000', '0x2006', '0x1009'),
      fc.integer({ min: 0, max: 3 }),
    )
    .map(([where, suppressed, retComp, pge, bits]) => {
      const pgd = (ip: string): string => (suppressed ? 'tip.pgd 0 0' : `tip.pgd 3 ${ip}`);
      const ret = retComp ? 'tnt.8 1 1' : 'tip 3 0x1009';
      const body =
        where === 'after call'
          ? [`tnt.8 2 ${bits}`, pgd('0x2000')]
          : where === 'after jz'
            ? [`tnt.8 3 ${bits << 1}`, pgd('0x2006')]
            : [`tnt.8 3 ${bits << 1}`, pgd('0x1009')];
      const resume: Record<string, string[]> = {
        '0x1000': [`tnt.8 3 ${bits << 1}`, ret],
        '0x2000': [`tnt.8 1 0`, ret],
        '0x2006': [ret],
        '0x1009': [],
      };
      return [
        ...head,
        ...body,
        `tip.pge 3 ${pge}`,
        ...(resume[pge] ?? []),
        `tip 3 ${hx(BASE)}`,
        'tnt.8 2 0',
        'tip.pgd 0 0',
      ];
    }),
} satisfies Record<string, fc.Arbitrary<string[]>>;
export type OptionKind = keyof typeof OPTION_KINDS;
