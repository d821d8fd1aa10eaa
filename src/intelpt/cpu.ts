/**
 * The CPU a trace was recorded on and the Intel PT errata libipt works
 * around for it (libipt pt_cpu_parse and pt_cpu_errata, as in libipt 2.3):
 * `--cpu FAMILY/MODEL[/STEPPING]` of Intel's ptdump and ptxed.
 */

export interface Cpu {
  family: number;
  model: number;
  stepping: number;
}

/** The errata flags of libipt's `struct pt_errata` that a CPU model turns on. */
export interface Errata {
  bdm70: boolean;
  bdm64: boolean;
  skd007: boolean;
  skd022: boolean;
  skd010: boolean;
  skl014: boolean;
  apl12: boolean;
  apl11: boolean;
  skl168: boolean;
  skz84: boolean;
}

export const NO_ERRATA: Readonly<Errata> = Object.freeze({
  bdm70: false,
  bdm64: false,
  skd007: false,
  skd022: false,
  skd010: false,
  skl014: false,
  apl12: false,
  apl11: false,
  skl168: false,
  skz84: false,
});

/** C strtol(s, &end, 0) on a prefix of s: the value and the rest, or null when no digits were read. */
function strtol(s: string): { value: number; rest: string } | null {
  const m = /^[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)/.exec(s);
  if (!m) return null;
  const [all, sign, digits = ''] = m;
  let v: number;
  if (/^0[xX]/.test(digits)) v = Number.parseInt(digits.slice(2), 16);
  else if (digits.startsWith('0')) v = digits.length > 1 ? Number.parseInt(digits.slice(1), 8) : 0;
  else v = Number.parseInt(digits, 10);
  return { value: sign === '-' ? -v : v, rest: s.slice(all.length) };
}

/** pt_cpu_parse: "f/m[/s]" (C integer literals; stepping defaults to 0), or null when malformed. */
export function parseCpu(s: string): Cpu | null {
  const f = strtol(s);
  if (!f?.rest.startsWith('/')) return null;
  if (f.value < 0 || f.value > 0xffff) return null;
  const m = strtol(f.rest.slice(1));
  if (!m || (m.rest !== '' && !m.rest.startsWith('/'))) return null;
  if (m.value < 0 || m.value > 0xff) return null;
  let stepping = 0;
  if (m.rest !== '') {
    // libipt accepts an empty stepping ("6/158/") as 0: strtol reads nothing and the rest is empty
    const st = strtol(m.rest.slice(1)) ?? { value: 0, rest: m.rest.slice(1) };
    if (st.rest !== '') return null;
    if (st.value < 0 || st.value > 0xff) return null;
    stepping = st.value;
  }
  return { family: f.value, model: m.value, stepping };
}

/**
 * Models the ptdump 2.3 binary knows beyond the libipt source perfpoke was
 * written from (6/0xd5, 0x12/1, 0x12/3: test/ptdump-libipt23.test.ts finds
 * every known model). Observed: no SKD007, SKZ84 or SKL168; the flow-level
 * errata are taken from the newest family 6 group (an assumption).
 */
const LATE: (keyof Errata)[] = ['bdm70', 'skl014', 'skd022', 'apl11'];

const GROUPS: [models: number[], errata: (keyof Errata)[]][] = [
  [
    [0x3d, 0x47, 0x4f, 0x56],
    ['bdm70', 'bdm64'],
  ],
  [
    [0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6],
    ['bdm70', 'skd007', 'skd022', 'skd010', 'skl014', 'skl168'],
  ],
  [
    [0x55, 0x6a, 0x6c, 0x8f, 0xad, 0xae, 0xcf],
    ['bdm70', 'skl014', 'skd022', 'skz84'],
  ],
  [
    [0x66, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0xa8],
    ['bdm70', 'skl014', 'skd022'],
  ],
  [
    [0x97, 0x9a, 0xbf, 0xb7, 0xb5, 0xaa, 0xac, 0xba, 0xcc, 0xbd, 0xc5, 0xc6, 0xd5],
    ['bdm70', 'skl014', 'skd022', 'apl11'],
  ],
  [
    [0x5c, 0x5f],
    ['apl12', 'apl11'],
  ],
  [[0x7a, 0x86, 0x96, 0x9c, 0xb6, 0xaf, 0xdd], ['apl11']],
];

/** pt_cpu_errata: the errata of an Intel CPU, or null for a model libipt does not know (-pte_bad_cpu). */
export function cpuErrata(cpu: Cpu): Errata | null {
  const e: Errata = { ...NO_ERRATA };
  let names: (keyof Errata)[] | undefined;
  if (cpu.family === 0x6) names = GROUPS.find(([models]) => models.includes(cpu.model))?.[1];
  else if (cpu.family === 0x13 && cpu.model === 0x01) names = ['bdm70', 'skl014', 'skd022', 'skz84'];
  else if (cpu.family === 0x12 && (cpu.model === 0x01 || cpu.model === 0x03)) names = LATE;
  if (!names) return null;
  for (const n of names) e[n] = true;
  return e;
}
