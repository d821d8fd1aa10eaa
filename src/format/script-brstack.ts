/**
 * The `brstack`, `brstacksym` and `brstackoff` fields of `perf script` for
 * samples that carry a branch stack (PERF_SAMPLE_BRANCH_STACK: LBR and the
 * like), as perf 6.1's builtin-script.c prints them
 * (perf_sample__fprintf_brstack / _brstacksym / _brstackoff and
 * print_bstack_flags): each entry `from/to/P|M|-/X|-/A|-/cycles/type `,
 * with the addresses' dso in parentheses when the dso field is shown.
 */

/** perf 6.1 util/branch.c branch_type_name, by branch_flags.type. */
const TYPE_NAMES = [
  'N/A',
  'COND',
  'UNCOND',
  'IND',
  'CALL',
  'IND_CALL',
  'RET',
  'SYSCALL',
  'SYSRET',
  'COND_CALL',
  'COND_RET',
  'ERET',
  'IRQ',
  'SERROR',
  'NO_TX',
];
/** branch_new_type_name, by new_type when type is PERF_BR_EXTEND_ABI (15); 8..15 have none: "(null)". */
const NEW_TYPE_NAMES = ['FAULT_ALGN', 'FAULT_DATA', 'FAULT_INST', 'ARCH_1', 'ARCH_2', 'ARCH_3', 'ARCH_4', 'ARCH_5'];

/**
 * struct branch_flags (little-endian bit fields): mispred, predicted, in_tx, abort, cycles:16, type:4,
 * spec:2, new_type:4.
 */
export function branchFlagsText(flags: bigint): string {
  const f = Number(flags & 0xffffffffn);
  const mispred = f & 1;
  const predicted = f & 2;
  const c = !(mispred || predicted) ? '-' : predicted ? 'P' : 'M';
  const cycles = (f >>> 4) & 0xffff;
  const type = (f >>> 20) & 0xf;
  const newType = (f >>> 26) & 0xf;
  const name = type === 0 ? '' : type === 15 ? (NEW_TYPE_NAMES[newType] ?? '(null)') : (TYPE_NAMES[type] ?? '');
  return `/${c}/${f & 4 ? 'X' : '-'}/${f & 8 ? 'A' : '-'}/${cycles}/${name} `;
}

/** How an address of a branch entry prints: its symbol and dso (and, for brstackoff, its dso offset). */
export interface BranchAddr {
  /** " name+0xoff" style text without the leading space: `name+0xoff` or `[unknown]`. */
  symOff: string;
  dso: string;
  /** map__map_ip (file offset) when the address has a map whose dso does not adjust symbols; else the address. */
  offset: bigint;
}

export type BranchKind = 'brstack' | 'brstacksym' | 'brstackoff';

/** The branch-stack field printed of `f` (perf prints one: brstack before brstacksym before brstackoff). */
export function branchKind(f: ReadonlySet<string>): BranchKind | undefined {
  return f.has('brstack')
    ? 'brstack'
    : f.has('brstacksym')
      ? 'brstacksym'
      : f.has('brstackoff')
        ? 'brstackoff'
        : undefined;
}

export function brstackText(
  kind: BranchKind,
  entries: readonly { from: bigint; to: bigint; flags: bigint }[],
  showDso: boolean,
  addr: (a: bigint) => BranchAddr,
): string {
  let s = '';
  for (const e of entries) {
    const from = addr(e.from);
    const to = addr(e.to);
    const dso = (b: BranchAddr): string => (showDso ? `(${b.dso})` : '');
    if (kind === 'brstack') s += ` 0x${e.from.toString(16)}${dso(from)}/0x${e.to.toString(16)}${dso(to)}`;
    else if (kind === 'brstacksym') s += `${from.symOff}${dso(from)}/${to.symOff}${dso(to)}`;
    else s += ` 0x${from.offset.toString(16)}${dso(from)}/0x${to.offset.toString(16)}${dso(to)}`;
    s += branchFlagsText(e.flags);
  }
  return s;
}
