/**
 * perfpoke check -i DIR [--json]
 *
 * Verify every TEXT_POKE against the code image at its time (kcore_dir plus
 * earlier pokes): its old bytes must match. A lost poke shows as a later poke
 * at the same site whose old bytes disagree; the report names the site and
 * the window the lost change lies in. Also reported: pokes with non-kernel
 * cpumode, pokes outside every known map, and trampoline removals that do
 * not match their creation — all things perf drops silently.
 *
 * Exit: 0 consistent, 1 findings, 2 bad input.
 */
import type { Command } from 'commander';
import { checkImage, type CheckPoke, type CheckReport } from '../../machine/check.js';
import { formatPerfTime } from '../../machine/time-format.js';
import type { Machine } from '../../machine/from-perf-data.js';
import { EXIT_NO, EXIT_OK } from '../errors.js';
import { loadWithProgress } from './pokes.js';

function pokeText(m: Machine, p: CheckPoke): string {
  const sym = m.symbolizer.symOff(p.addr, p);
  return `${formatPerfTime(p.time)} cpu ${p.cpu} ${p.addr.toString(16)}${sym ? ` ${sym}` : ''} len ${p.oldLen}/${p.newLen} (file offset 0x${p.fileOffset.toString(16)})`;
}

export function checkMachine(m: Machine): CheckReport {
  return checkImage(m.image, {
    maps: m.kernelMaps.map((k) => ({ start: k.start, end: k.end })),
    ksymbols: m.ksymbols.filter((k) => !(k.flags & 1)),
  });
}

function toJson(m: Machine, r: CheckReport): unknown {
  const p = (x: CheckPoke) => ({
    time: x.time.toString(),
    timeText: formatPerfTime(x.time),
    cpu: x.cpu,
    addr: x.addr.toString(16),
    sym: m.symbolizer.symOff(x.addr, x),
    oldLen: x.oldLen,
    newLen: x.newLen,
    fileOffset: x.fileOffset,
  });
  return {
    ok: r.ok,
    pokes: r.pokes,
    sites: r.sites,
    consistent: r.consistent,
    stale: r.stale,
    kcoreDir: m.kcore ? m.kcore.dir : null,
    disagreements: r.disagreements.map((d) => ({
      siteStart: d.siteStart.toString(16),
      siteEnd: d.siteEnd.toString(16),
      sym: m.symbolizer.symOff(d.siteStart),
      stalePokes: d.stale,
      first: p(d.poke),
      expected: d.expected,
      actual: d.actual,
      lostAfter: d.windowAfter === undefined ? null : d.windowAfter.toString(),
      lostBefore: d.windowBefore.toString(),
    })),
    nonKernel: r.nonKernel.map(p),
    outsideMaps: r.outsideMaps.map(p),
    badRemovals: r.badRemovals.map((b) => ({ ...p(b.poke), reason: b.reason })),
    warnings: m.warnings,
  };
}

export function register(program: Command): void {
  program
    .command('check')
    .description("verify every TEXT_POKE's old bytes against the code image at its time; find lost pokes")
    .requiredOption(
      '-i, --input <path>',
      'a `perf record --kcore` directory (or a perf.data file: then only pokes are compared to each other)',
    )
    .option('--json', 'print JSON')
    .option('--text-poke-abi <abi>', "'final' (upstream, type 20) or 'rfc' (the seed's type 19 form)", 'final')
    .addHelpText(
      'after',
      '\nExit status: 0 consistent, 1 findings (stale/lost pokes, pokes perf drops), 2 bad input.\nExample:\n  perfpoke check -i perf.data.dir',
    )
    .action(async (opts: { input: string; json?: boolean; textPokeAbi?: string }) => {
      const m = await loadWithProgress(opts.input, opts.textPokeAbi);
      const r = checkMachine(m);
      process.exitCode = r.ok ? EXIT_OK : EXIT_NO;
      if (opts.json) {
        process.stdout.write(JSON.stringify(toJson(m, r), null, 1) + '\n');
        return;
      }
      const out: string[] = [];
      out.push(
        `pokes ${r.pokes}, sites ${r.sites}: ${r.consistent} consistent, ${r.stale} stale${m.kcore ? '' : ' (no kcore_dir: first pokes define the bytes)'}`,
      );
      for (const w of m.warnings) out.push(`warning: ${w}`);
      for (const d of r.disagreements) {
        const sym = m.symbolizer.symOff(d.siteStart);
        out.push(
          `site ${d.siteStart.toString(16)}-${d.siteEnd.toString(16)}${sym ? ` ${sym}` : ''}: ${d.stale} stale poke(s), first at ${pokeText(m, d.poke)}`,
        );
        out.push(`  image holds: ${d.expected}`);
        out.push(`  poke's old:  ${d.actual}`);
        out.push(
          `  a change is missing between ${d.windowAfter === undefined ? 'the start of the recording' : formatPerfTime(d.windowAfter)} and ${formatPerfTime(d.windowBefore)}`,
        );
      }
      for (const p of r.nonKernel) out.push(`non-kernel cpumode (perf ignores it): ${pokeText(m, p)}`);
      for (const p of r.outsideMaps) out.push(`outside every known map (perf drops it): ${pokeText(m, p)}`);
      for (const b of r.badRemovals)
        out.push(`trampoline removal does not match its creation (${b.reason}): ${pokeText(m, b.poke)}`);
      out.push(r.ok ? 'consistent' : 'INCONSISTENT');
      process.stdout.write(out.join('\n') + '\n');
    });
}
