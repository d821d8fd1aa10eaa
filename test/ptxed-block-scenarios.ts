/**
 * Generated PT scenarios over an image where libipt's block cache shows:
 * straight-line code, a near direct call and its return, a forward and a
 * backward near direct jump (a loop), conditional branches and an indirect
 * jump back to the start. One pass through it, from 0x1000:
 *
 *   1000 nop; 1001 nop; 1002 call 1020; 1007 nop; 1008 jz 100c; 100a nop; 100b nop
 *   100c jmp 1010; 100e nop; 100f nop (skipped)
 *   1010 jz 1016 (the loop exit); 1012 nop; 1013 nop; 1014 jmp 1010 (back)
 *   1016 jmp *%rax (a TIP to 1000)
 *   1020 nop; 1021 jz 1024; 1023 nop; 1024 ret (compressed: a taken TNT bit, or a TIP to 1007)
 *
 * A pass is a list of the instructions walked with the trace each consumes;
 * scenarios cut passes at an instruction to bind an event there (the steps
 * follow test/pt-scenario.ts). Every scenario is consistent with the image.
 */
import fc from 'fast-check';

export const BLOCK_BASE = 0x1000;
const hex = (s: string): number[] => s.split(' ').map((b) => Number.parseInt(b, 16));
export const BLOCK_IMAGE = new Uint8Array([
  ...hex('90 90 e8 19 00 00 00 90 74 02 90 90 eb 02 90 90'),
  ...hex('74 04 90 90 eb fa ff e0 90 90 90 90 90 90 90 90'),
  ...hex('90 74 01 90 c3'),
]);

const hx = (v: number): string => `0x${v.toString(16)}`;

/** One walked instruction and the trace it consumes: a TNT bit, a TIP target, or none. */
interface Step {
  ip: number;
  tnt?: boolean;
  tip?: number;
}

interface PassShape {
  /** The function's jz taken. */
  f: boolean;
  /** The return is compressed (a TNT bit) rather than a TIP. */
  retComp: boolean;
  /** The jz at 1008 taken. */
  j: boolean;
  /** Times round the loop before its exit. */
  loops: number;
}

function walk(p: PassShape): Step[] {
  const s: Step[] = [{ ip: 0x1000 }, { ip: 0x1001 }, { ip: 0x1002 }, { ip: 0x1020 }, { ip: 0x1021, tnt: p.f }];
  if (!p.f) s.push({ ip: 0x1023 });
  s.push(p.retComp ? { ip: 0x1024, tnt: true } : { ip: 0x1024, tip: 0x1007 });
  s.push({ ip: 0x1007 }, { ip: 0x1008, tnt: p.j });
  if (!p.j) s.push({ ip: 0x100a }, { ip: 0x100b });
  s.push({ ip: 0x100c });
  for (let k = 0; k < p.loops; k++) s.push({ ip: 0x1010, tnt: false }, { ip: 0x1012 }, { ip: 0x1013 }, { ip: 0x1014 });
  s.push({ ip: 0x1010, tnt: true }, { ip: 0x1016, tip: BLOCK_BASE });
  return s;
}

/** The packets for `steps`: TNT bits gathered into tnt.8 packets of up to six, TIPs in their place. */
function packets(steps: readonly Step[]): string[] {
  const out: string[] = [];
  let bits = '';
  const flush = (): void => {
    if (bits) out.push(`tnt.8 ${bits.length} ${Number.parseInt(bits, 2)}`);
    bits = '';
  };
  for (const s of steps) {
    if (s.tnt !== undefined) {
      bits += s.tnt ? '1' : '0';
      if (bits.length === 6) flush();
    }
    if (s.tip !== undefined) {
      flush();
      out.push(`tip 3 ${hx(s.tip)}`);
    }
  }
  flush();
  return out;
}

const shape: fc.Arbitrary<PassShape> = fc.record({
  f: fc.boolean(),
  retComp: fc.boolean(),
  j: fc.boolean(),
  loops: fc.integer({ min: 0, max: 3 }),
});
const passes = fc.array(shape, { minLength: 0, maxLength: 3 }).map((ps) => ps.flatMap((p) => packets(walk(p))));

/**
 * A pass cut before one of its instructions (one that takes no trace with
 * `plain`): packets up to it, its IP, after.
 */
const cut = (plain: boolean) =>
  fc.tuple(shape, fc.nat()).map(([p, k]) => {
    const steps = walk(p);
    const at = steps.map((_s, i) => i).filter((i) => !plain || (steps[i]?.tnt ?? steps[i]?.tip) === undefined);
    const i = at[k % at.length] ?? 0;
    return { before: packets(steps.slice(0, i)), ip: hx(steps[i]?.ip ?? BLOCK_BASE), after: packets(steps.slice(i)) };
  });
const cutPass = cut(false);

export const BLOCK_KINDS = {
  plain: passes,
  'direct disable-enable': fc
    .tuple(passes, shape, passes)
    .map(([a, p, b]) => [...a, ...packets(walk(p)).slice(0, -1), 'tip.pgd 0 0', `tip.pge 3 ${hx(BLOCK_BASE)}`, ...b]),
  // a TIP.PGD with the call's target: tracing resumes in the function ([resumed]) or after the call ([enabled])
  'disabled at the call': fc.tuple(passes, shape, fc.boolean(), passes).map(([a, p, into, b]) => {
    const st = walk(p);
    const k = into ? 3 : st.findIndex((x) => x.ip === 0x1007);
    return [...a, 'tip.pgd 3 0x1020', `tip.pge 3 ${hx(st[k]?.ip ?? BLOCK_BASE)}`, ...packets(st.slice(k)), ...b];
  }),
  // a TIP.PGD with the IP of an instruction the walk reaches (any, also one taking trace): libipt disables
  // before it (an empty block when nothing was walked since the last event), then `[resumed]` there or
  // `[enabled]` at the start
  'disabled at its IP': fc
    .tuple(passes, cutPass, fc.boolean(), passes)
    .map(([a, c, back, b]) => [
      ...a,
      ...c.before,
      `tip.pgd 3 ${c.ip}`,
      ...(back ? [`tip.pge 3 ${c.ip}`, ...c.after] : [`tip.pge 3 ${hx(BLOCK_BASE)}`, ...b]),
    ]),
  interrupt: fc
    .tuple(passes, cutPass, passes)
    .map(([a, c, b]) => [...a, ...c.before, `fup 3 ${c.ip}`, `tip 3 ${hx(BLOCK_BASE)}`, ...b]),
  'async disable, resumed': fc
    .tuple(passes, cutPass)
    .map(([a, c]) => [...a, ...c.before, `fup 3 ${c.ip}`, 'tip.pgd 0 0', `tip.pge 3 ${c.ip}`, ...c.after]),
  'psb+': fc
    .tuple(passes, cutPass)
    .map(([a, c]) => [...a, ...c.before, 'psb', 'mode.exec 1 0', `fup 3 ${c.ip}`, 'psbend', ...c.after]),
  'overflow, resumed': fc
    .tuple(passes, cutPass)
    .map(([a, c]) => [...a, ...c.before, 'ovf', `fup 3 ${c.ip}`, ...c.after]),
  tsx: fc
    .tuple(passes, cutPass, fc.boolean())
    .map(([a, c, commit]) => [
      ...a,
      ...c.before,
      'mode.tsx 1 0',
      `fup 3 ${c.ip}`,
      ...c.after.slice(0, -1),
      ...(commit ? ['mode.tsx 0 0', `fup 3 ${hx(0x1016)}`] : []),
      ...c.after.slice(-1),
    ]),
  // (bound to an instruction that is not a branch: a PTWRITE bound to a conditional branch that takes the last
  // bit of its TNT, followed by a return, makes libipt report an internal error — not modelled)
  ptwrite: fc
    .tuple(passes, cut(true), fc.bigInt({ min: 0n, max: 0xffffffffn }))
    .map(([a, c, v]) => [...a, ...c.before, `ptw 0 0x${v.toString(16)} 1`, `fup 3 ${c.ip}`, ...c.after]),
  'cbr in a pass': fc.tuple(passes, cutPass).map(([a, c]) => [...a, ...c.before, 'cbr 12', ...c.after]),
  // a packet lost: the decoder errs where the trace no longer fits the code, and resynchronizes at the next PSB
  'packet lost': fc.tuple(passes, shape, fc.nat(), passes).map(([a, p, k, b]) => {
    const pk = packets(walk(p));
    return [
      ...a,
      ...pk.filter((_x, i) => i !== k % pk.length),
      'psb',
      'mode.exec 1 0',
      `fup 3 ${hx(BLOCK_BASE)}`,
      'psbend',
      ...b,
    ];
  }),
  // the trace ends with tracing enabled, anywhere in a pass (the last pass below is then not reached)
  'trace ends': fc.tuple(passes, cutPass).map(([a, c]) => [...a, ...c.before]),
} satisfies Record<string, fc.Arbitrary<string[]>>;
export type BlockKind = keyof typeof BLOCK_KINDS;

/** The whole scenario: PSB+, TIP.PGE at the image start, the body, a last pass and its TIP.PGD. */
export function blockScenario(kind: BlockKind): fc.Arbitrary<string[]> {
  const head = ['psb', 'mode.exec 1 0', 'psbend', `tip.pge 3 ${hx(BLOCK_BASE)}`];
  return fc
    .tuple(BLOCK_KINDS[kind], shape)
    .map(([body, last]) =>
      kind === 'trace ends'
        ? [...head, ...body]
        : [...head, ...body, ...packets(walk(last)).slice(0, -1), 'tip.pgd 0 0'],
    );
}

/**
 * Code for an exec mode change inside libipt's block cache (it decodes the
 * same in 64-bit and 32-bit mode: the ptxed view's decoder is 64-bit only):
 *
 *   1000 nop; 1001 nop; 1002 jz 1006; 1004 nop; 1005 nop; 1006 jmp *%rax
 *
 * Passes start at 1000 or 1001 in either mode (a MODE.Exec before the TIP
 * when it changes): a cache fill from 1000 that meets the entry at 1001
 * made in the other mode fails in libipt (an internal error); a walk through
 * entries of the other mode does not.
 */
export const MODE_IMAGE = new Uint8Array(hex('90 90 74 02 90 90 ff e0'));

export const modeScenario: fc.Arbitrary<string[]> = fc
  .array(fc.record({ m64: fc.boolean(), start: fc.constantFrom(0x1000, 0x1001), taken: fc.boolean() }), {
    minLength: 1,
    maxLength: 6,
  })
  .map((ps) => {
    const out = ['psb', `mode.exec ${ps[0]?.m64 ? '1 0' : '0 1'}`, 'psbend'];
    ps.forEach((p, i) => {
      if (i > 0 && p.m64 !== ps[i - 1]?.m64) out.push(`mode.exec ${p.m64 ? '1 0' : '0 1'}`);
      out.push(`${i === 0 ? 'tip.pge' : 'tip'} 3 ${hx(p.start)}`, `tnt.8 1 ${p.taken ? 1 : 0}`);
    });
    out.push('tip.pgd 0 0');
    return out;
  });
