/**
 * perfpoke pokes -i DIR [--site ADDR] [--json]
 *
 * One line per TEXT_POKE in perf's event order (time, then file order):
 * time, cpu, address, sym+off (perf's symbolization from kcore_dir), lengths,
 * old → new bytes, the instructions before → after, and what kind of poke it
 * looks like. `--site` keeps one site's history.
 */
import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { statSync } from 'node:fs';
import { loadMachine, type Machine } from '../../machine/from-perf-data.js';
import { classifyPoke } from '../../x86/poke-kind.js';
import { disassembleLine } from '../../x86/disasm.js';
import { hexBytes } from '../../machine/poke.js';
import { formatPerfTime, parseAddr } from '../../machine/time-format.js';
import type { PlacedPoke } from '../../machine/code-image.js';
import { UsageError } from '../errors.js';

/** Load with a progress bar on stderr when it is a TTY (shared by pokes, image, check). */
export async function loadWithProgress(input: string, abi?: string): Promise<Machine> {
  if (abi !== undefined && abi !== 'final' && abi !== 'rfc')
    throw new UsageError(`--text-poke-abi: expected final or rfc, got '${abi}'`);
  const textPokeAbi = abi as 'final' | 'rfc' | undefined;
  if (!process.stderr.isTTY) return loadMachine(input, { textPokeAbi });
  let total = 0;
  try {
    const st = statSync(input);
    total = st.isDirectory() ? statSync(`${input}/data`).size : st.size;
  } catch {
    // loadMachine reports the missing file
  }
  const bar = new SingleBar({ stream: process.stderr, format: 'reading {bar} {percentage}%', clearOnComplete: true });
  bar.start(Math.max(total, 1), 0);
  try {
    return await loadMachine(input, { textPokeAbi, onProgress: (b) => bar.update(Math.min(b, total)) });
  } finally {
    bar.stop();
  }
}

/** Address given as hex, or as `symbol` / `symbol+0xoff` from kcore_dir/kallsyms. */
export function resolveAddr(m: Machine, text: string): bigint {
  const t = text.trim();
  if (/^0x[0-9a-f]+$/i.test(t)) return parseAddr(t)!;
  const mm = /^([^+]+)(?:\+(0x[0-9a-fA-F]+|\d+))?$/.exec(t);
  if (mm && m.kcore) {
    const sym = m.kcore.symbols.symbols.find((s) => s.name === mm[1]);
    if (sym) return sym.start + (mm[2] ? BigInt(mm[2]) : 0n);
  }
  const a = parseAddr(t); // bare hex (ffffffff81000000) when no symbol has that name
  if (a !== undefined) return a;
  throw new UsageError(`cannot resolve address '${text}': give hex (0xffffffff81000000) or a kallsyms symbol[+0xoff]`);
}

export interface PokeView {
  time: string;
  timeNs: string;
  cpu: number;
  addr: string;
  sym: string;
  oldLen: number;
  newLen: number;
  old: string;
  new: string;
  before: string;
  after: string;
  kind: string;
  /** The KSYMBOL naming this address, when it differs from perf's `sym` (trampolines, BPF). */
  ksym?: string;
  consistent: boolean;
  fileOffset: number;
}

export function viewPoke(m: Machine, pp: PlacedPoke): PokeView {
  const p = pp.poke;
  const at = { time: p.time, fileOffset: p.fileOffset };
  const symbolize = (a: bigint): string => m.symbolizer.symOff(a, at);
  const sym = m.symbolizer.find(p.addr, at);
  const perfSym = symbolize(p.addr);
  // branch targets: the code's own KSYMBOL name first (a BPF trampoline says so), else perf's
  const nameTarget = (a: bigint): string => m.symbolizer.ksymbolAt(a, at) ?? symbolize(a);
  const ksym = m.symbolizer.ksymbolAt(p.addr, at);
  let kind: string = classifyPoke(p, sym ? p.addr - sym.start : undefined);
  // an fentry nop <-> call whose call goes to a BPF trampoline is a BPF attach/detach, not ftrace
  const call = kind === 'ftrace' ? [p.newBytes, p.oldBytes].find((b) => b.length === 5 && b[0] === 0xe8) : undefined;
  if (call) {
    const target = p.addr + 5n + BigInt(new DataView(call.buffer, call.byteOffset, 5).getInt32(1, true));
    if (m.symbolizer.ksymbolAt(target, at)?.startsWith('bpf_trampoline')) kind = 'bpf-trampoline';
  }
  return {
    time: formatPerfTime(p.time),
    timeNs: p.time.toString(),
    cpu: p.cpu,
    addr: p.addr.toString(16),
    sym: perfSym,
    ...(ksym && ksym !== perfSym ? { ksym } : {}),
    oldLen: p.oldBytes.length,
    newLen: p.newBytes.length,
    old: hexBytes(p.oldBytes),
    new: hexBytes(p.newBytes),
    before: disassembleLine(p.oldBytes, p.addr, nameTarget),
    after: disassembleLine(p.newBytes, p.addr, nameTarget),
    kind,
    consistent: pp.consistent,
    fileOffset: p.fileOffset,
  };
}

export function formatPokeLine(v: PokeView): string {
  const cpu = v.cpu >= 0 ? v.cpu.toString().padStart(3, '0') : '---';
  const bytes = `${v.old || '(none)'} -> ${v.new || '(none)'}`;
  const insns = `${v.before || '(no code)'} -> ${v.after || '(no code)'}`;
  return `${v.time.padStart(16)} [${cpu}] ${v.addr} ${v.sym || '?'}${v.ksym ? ` (ksymbol ${v.ksym})` : ''} ${v.kind} len ${v.oldLen}/${v.newLen}: ${bytes} | ${insns}${v.consistent ? '' : '  STALE (old bytes differ from the image)'}`;
}

export function register(program: Command): void {
  program
    .command('pokes')
    .description('list TEXT_POKE events: time, cpu, addr, sym+off, old -> new bytes and instructions, kind')
    .requiredOption('-i, --input <path>', 'perf.data file, or a `perf record --kcore` directory (uses its kcore_dir)')
    .option('--site <addr>', "only pokes touching this address (hex or symbol[+0xoff]): one site's history")
    .option('--json', 'print JSON: {"pokes": [...]}')
    .option('--text-poke-abi <abi>', "'final' (upstream, type 20) or 'rfc' (the seed's type 19 form)", 'final')
    .addHelpText(
      'after',
      `
Kinds: jump-label, static-call, ftrace, trampoline-create, trampoline-remove,
kprobe, optprobe, other. Instructions are AT&T syntax (as objdump -d).
Example:
  perfpoke pokes -i perf.data.dir --site do_sys_open+0x10`,
    )
    .action(async (opts: { input: string; site?: string; json?: boolean; textPokeAbi?: string }) => {
      const m = await loadWithProgress(opts.input, opts.textPokeAbi);
      let list = m.image.pokes;
      if (opts.site !== undefined) {
        const a = resolveAddr(m, opts.site);
        list = m.image.pokesIn(a, a + 1n);
      }
      const all = [
        ...list,
        ...m.image.ignoredPokes.map((p, i) => ({ poke: p, seq: -1 - i, consistent: false }) as unknown as PlacedPoke),
      ];
      const views = (opts.site !== undefined ? list : all).map((pp) => viewPoke(m, pp));
      if (opts.json) {
        process.stdout.write(JSON.stringify({ pokes: views }, null, 1) + '\n');
        return;
      }
      const out: string[] = views.map(formatPokeLine);
      for (const w of m.warnings) process.stderr.write(`perfpoke: warning: ${w}\n`);
      if (m.image.ignoredPokes.length > 0)
        out.push(`(${m.image.ignoredPokes.length} poke(s) with non-kernel cpumode listed last: perf ignores them)`);
      process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
    });
}
