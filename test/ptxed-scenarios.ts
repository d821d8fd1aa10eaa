/**
 * Generated PT scenarios for the ptxed view, one kind per corner of the
 * spec, over one image: six `jz +0` at 0x1000 (either TNT bit leads to the
 * next one) and `jmp *%rax` at 0x100c (a TIP). Each scenario starts with
 * PSB+ and TIP.PGE at 0x1000 and ends with the last pass's TIP.PGD; the
 * steps follow test/pt-scenario.ts. Every scenario is consistent with the
 * image, so Intel's ptxed decodes it (or reports the error the spec says).
 */
import fc from 'fast-check';

export const BASE = 0x1000;
export const IMAGE = new Uint8Array([
  0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0xff, 0xe0,
]);

const hx = (v: number | bigint): string => `0x${v.toString(16)}`;
/** The IP of the k-th instruction (k = 0..6; 6 is the jmp). */
const at = (k: number): string => hx(BASE + 2 * k);
const tnt = (n: number, bits: number): string[] => (n > 0 ? [`tnt.8 ${n} ${bits & ((1 << n) - 1)}`] : []);

const bits = fc.integer({ min: 0, max: 63 });
const k = fc.integer({ min: 0, max: 6 });
/** A whole pass through the loop: six TNT bits and the TIP back to the start. */
const pass = bits.map((b) => [...tnt(6, b), `tip 3 ${hx(BASE)}`]);
const passes = fc.array(pass, { minLength: 0, maxLength: 2 }).map((p) => p.flat());
/** The rest of a pass from instruction j on. */
const rest = (j: number, b: number): string[] => [...tnt(6 - j, b), `tip 3 ${hx(BASE)}`];

/** `events` bound to instruction k of a pass (a FUP there when `fup`), then the rest of the pass. */
function splitPass(events: fc.Arbitrary<string[]>, fup = true): fc.Arbitrary<string[]> {
  return fc
    .tuple(k, bits, bits, events)
    .map(([i, b1, b2, ev]) => [...tnt(i, b1), ...ev, ...(fup ? [`fup 3 ${at(i)}`] : []), ...rest(i, b2)]);
}

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const cstate = fc.integer({ min: 0, max: 15 });

export const KINDS = {
  plain: passes,
  timing: fc
    .tuple(
      passes,
      fc.array(fc.constantFrom('mtc 7', 'cyc 9', 'tsc 0x123456', 'cbr 20', 'pad', 'mnt 0x1234'), {
        minLength: 1,
        maxLength: 4,
      }),
      passes,
    )
    .map(([a, t, b]) => [...a, ...t, ...b]),
  'cbr in a pass': splitPass(
    fc.integer({ min: 0, max: 255 }).map((r) => [`cbr ${r}`]),
    false,
  ),
  'psb+': fc
    .tuple(passes, passes, fc.boolean())
    .map(([a, b, cbr]) => [
      ...a,
      'psb',
      'mode.exec 1 0',
      ...(cbr ? ['cbr 9', 'tsc 0x1000'] : []),
      `fup 3 ${hx(BASE)}`,
      'psbend',
      ...b,
    ]),
  'overflow, resumed': fc
    .tuple(passes, k, bits, k, bits, fc.boolean())
    .map(([a, i, b1, j, b2, t]) => [
      ...a,
      ...tnt(i, b1),
      'ovf',
      ...(t ? ['tsc 0x2000'] : []),
      `fup 3 ${at(j)}`,
      ...rest(j, b2),
    ]),
  'overflow, disabled': fc
    .tuple(passes, k, bits, bits)
    .map(([a, i, b1, b2]) => [...a, ...tnt(i, b1), 'ovf', 'tsc 0x3000', `tip.pge 3 ${hx(BASE)}`, ...rest(0, b2)]),
  'disable-enable': fc
    .tuple(passes, passes)
    .map(([a, b]) => [...a, ...tnt(6, 0), 'tip.pgd 0 0', `tip.pge 3 ${hx(BASE)}`, ...b]),
  'async disable': fc
    .tuple(passes, k, bits, k, bits)
    .map(([a, i, b1, j, b2]) => [
      ...a,
      ...tnt(i, b1),
      `fup 3 ${at(i)}`,
      'tip.pgd 0 0',
      `tip.pge 3 ${at(j)}`,
      ...rest(j, b2),
    ]),
  resumed: fc
    .tuple(passes, k, bits, bits)
    .map(([a, i, b1, b2]) => [
      ...a,
      ...tnt(i, b1),
      `fup 3 ${at(i)}`,
      'tip.pgd 0 0',
      `tip.pge 3 ${at(i)}`,
      ...rest(i, b2),
    ]),
  // the trace shapes libipt's errata workarounds look for (BDM70, SKD010, APL11, APL12); they decode
  // differently with and without the --cpu model that has the erratum
  'overflow, errata': fc
    .tuple(passes, k, bits, k, bits, fc.constantFrom('skd010', 'apl11', 'apl12', 'bdm70'))
    .map(([a, i, b1, j, b2, e]) => {
      switch (e) {
        case 'skd010':
          return [...a, ...tnt(i, b1), 'ovf', `tip 3 ${at(j)}`, ...rest(j, b2)];
        case 'apl11':
          return [...a, ...tnt(6, b1), 'ovf', 'tip.pgd 0 0', `tip.pge 3 ${at(j)}`, ...rest(j, b2)];
        case 'apl12':
          return [...a, ...tnt(i, b1), 'ovf', `fup 3 ${at(i)}`, `tip.pge 3 ${at(j)}`, ...rest(j, b2)];
        default:
          return [
            ...a,
            ...tnt(6, b1),
            'tip.pgd 0 0',
            'psb',
            'mode.exec 1 0',
            `fup 3 ${at(j)}`,
            'psbend',
            `tip.pge 3 ${at(j)}`,
            ...rest(j, b2),
          ];
      }
    }),
  interrupt: fc
    .tuple(passes, k, bits, k, bits)
    .map(([a, i, b1, j, b2]) => [...a, ...tnt(i, b1), `fup 3 ${at(i)}`, `tip 3 ${at(j)}`, ...rest(j, b2)]),
  'exec mode': fc
    .tuple(passes, fc.constantFrom('1 0', '0 1', '0 0'), bits, bits)
    .map(([a, m, b1, b2]) => [...a, ...tnt(6, b1), `mode.exec ${m}`, `tip 3 ${hx(BASE)}`, ...rest(0, b2)]),
  tsx: fc
    .tuple(passes, k, bits, fc.constantFrom('commit', 'abort'), bits)
    .map(([a, i, b1, end, b2]) => [
      ...a,
      ...tnt(i, b1),
      'mode.tsx 1 0',
      `fup 3 ${at(i)}`,
      ...rest(i, b2),
      ...(end === 'commit' ? ['mode.tsx 0 0', `fup 3 ${at(0)}`] : ['mode.tsx 0 1', `fup 3 ${at(0)}`, `tip 3 ${at(0)}`]),
    ]),
  'paging, vmcs': fc
    .tuple(passes, k, bits, fc.bigInt({ min: 0n, max: (1n << 47n) - 1n }), fc.boolean(), fc.boolean())
    .map(([a, i, b, cr3, nr, both]) => [
      ...a,
      ...tnt(i, b),
      `fup 3 ${at(i)}`,
      ...(both ? [`vmcs ${hx(cr3 << 12n)}`] : []),
      `pip ${hx(cr3 << 5n)} ${+nr}`,
      `tip 3 ${at(0)}`,
      ...rest(0, b),
      ...tnt(6, 0),
      'tip.pgd 0 0',
      `pip ${hx(cr3 << 5n)} ${+!nr}`,
      `vmcs ${hx(cr3 << 12n)}`,
      `tip.pge 3 ${hx(BASE)}`,
    ]),
  stop: fc.tuple(passes, bits).map(([a, b]) => [...a, ...tnt(6, b), 'tip.pgd 0 0', 'stop', `tip.pge 3 ${hx(BASE)}`]),
  'exstop, mwait, pwre, pwrx': splitPass(
    fc
      .tuple(u32, u32, cstate, cstate, fc.boolean(), cstate, cstate, fc.integer({ min: 0, max: 15 }), fc.boolean())
      .map(([h, e, s, ss, hw, l, d, wake, mw]) =>
        [...(mw ? [`mwait ${h} ${e}`] : []), `pwre ${s} ${ss} ${+hw}`, 'exstop 1'].concat([`pwrx ${l} ${d} ${wake}`]),
      ),
  ).map((x) => {
    // the PWRX follows the FUP (the CPU wakes after the IP is known)
    const i = x.findIndex((l) => l.startsWith('pwrx'));
    const f = x.findIndex((l) => l.startsWith('fup'));
    const p = x[i] ?? '';
    const out = x.filter((_l, j) => j !== i);
    out.splice(f, 0, p);
    return out;
  }),
  'exstop alone': splitPass(fc.constant(['exstop 0']), false),
  ptwrite: splitPass(
    fc.tuple(fc.constantFrom(0, 1), u64).map(([plc, v]) => [`ptw ${plc} ${hx(plc ? v : v & 0xffffffffn)} 1`]),
  ),
  trig: fc
    .tuple(k, bits, bits, fc.integer({ min: 0, max: 255 }), fc.boolean(), fc.boolean())
    .map(([i, b1, b2, trbv, mult, ip]) => [
      ...tnt(i, b1),
      ...(ip ? [`trig ${trbv} 1 ${+mult} 0`, `fup 3 ${at(i)}`] : [`trig ${trbv} 0 ${+mult}`]),
      ...rest(i, b2),
    ]),
  'event tracing, disabled': fc
    .tuple(passes, fc.integer({ min: 1, max: 16 }), fc.integer({ min: 0, max: 255 }), u64, fc.constantFrom(-1, 0, 1, 2))
    .map(([a, type, v, data, evd]) => [
      ...a,
      ...tnt(6, 0),
      'tip.pgd 0 0',
      ...(evd >= 0 ? [`evd ${evd} ${hx(data)}`] : []),
      `cfe ${evd === 0 ? 1 : evd > 0 ? 8 : type} ${v} 0`,
      `tip.pge 3 ${hx(BASE)}`,
    ]),
  'event tracing, in flow': fc
    .tuple(
      passes,
      k,
      bits,
      k,
      bits,
      // (SWINTR and SYSCALL, 14 and 15, in a flow: not modelled, docs/intel-pt-flow.md)
      fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 13 }), fc.constant(16)),
      fc.boolean(),
      fc.integer({ min: 0, max: 255 }),
    )
    .map(([a, i, b1, j, b2, type, ip, v]) => [
      ...a,
      ...tnt(i, b1),
      `cfe ${type} ${v} ${+ip}`,
      `fup 3 ${at(i)}`,
      `tip 3 ${at(j)}`,
      ...rest(j, b2),
    ]),
  iflags: fc
    .tuple(passes, bits, bits, fc.boolean())
    .map(([a, b1, b2, on]) => [...a, ...tnt(6, b1), `mode.exec 1 0 ${+on}`, `tip 3 ${hx(BASE)}`, ...rest(0, b2)]),
} satisfies Record<string, fc.Arbitrary<string[]>>;
export type Kind = keyof typeof KINDS;

/** What Intel's ptxed prints for some scenario of each kind (so a kind really exercises its event). */
export const MARKERS: Record<Kind, RegExp> = {
  plain: /^\[disabled\]$/m,
  timing: /^\[mnt: /m,
  'cbr in a pass': /^\[cbr: [0-9a-f]+\]$/m,
  'psb+': /^0{12}100c\n0{12}1000$/m,
  'overflow, resumed': /^\[overflow\]$/m,
  'overflow, disabled': /^\[overflow\]\n\[enabled\]$/m,
  'disable-enable': /^\[disabled\]\n\[enabled\]$/m,
  'async disable': /^\[disabled\]\n\[enabled\]$/m,
  resumed: /^\[resumed\]$/m,
  'overflow, errata': /^\[overflow\]$/m,
  interrupt: /^\[interrupt\]$/m,
  'exec mode': /^\[exec mode: (16|32)-bit\]$/m,
  tsx: /^\[begin transaction\]\n\? 0{12}10/m,
  'paging, vmcs': /^\[paging, cr3: [0-9a-f]{16}(, nr)?\]$/m,
  stop: /^\[stopped\]$/m,
  'exstop, mwait, pwre, pwrx': /^\[mwait [0-9a-f]+ [0-9a-f]+\]\n\[exstop\]$/m,
  'exstop alone': /^\[exstop\]$/m,
  ptwrite: /^\[ptwrite: [0-9a-f]+\]$/m,
  trig: /^\[trig [0-9a-f]{2}(, mult)?\]$/m,
  'event tracing, disabled': /^\[(vmexit|interrupt [0-9]+), (intr: [0-9]+, )?(cr2|vmxr|vmxq): [0-9a-f]{16}/m,
  'event tracing, in flow': /^\[interrupt [0-9]+(, ip: [0-9a-f]{16})?\]\n\[interrupt/m,
  iflags: /^\[interrupts (enabled|disabled)(, ip: [0-9a-f]{16})?\]$/m,
};

/** The whole scenario: PSB+, TIP.PGE at the image start, the body, the last pass and TIP.PGD. */
export function scenario(kind: Kind): fc.Arbitrary<string[]> {
  const head = ['psb', 'mode.exec 1 0', 'tsc 0x100', 'psbend', `tip.pge 3 ${hx(BASE)}`];
  const tail = [...tnt(6, 0), 'tip.pgd 0 0'];
  return KINDS[kind].map((body) => [...head, ...body, ...tail]);
}
