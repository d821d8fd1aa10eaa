/**
 * perfpoke image -i DIR --addr A --len N [--time T] [--json]
 *
 * The kernel code over [A, A+N) as a CPU saw it at time T (default: end of
 * the recording): kcore_dir bytes with every poke up to T applied, listed as
 * instructions. T is perf's "seconds.microseconds" (as perf script prints
 * times) or raw nanoseconds.
 */
import type { Command } from 'commander';
import { CodeImage } from '../../machine/code-image.js';
import { disassemble } from '../../machine/disasm.js';
import { hexBytes } from '../../machine/poke.js';
import { formatNsTime, formatPerfTime, parsePerfTime } from '../../machine/time-format.js';
import { UsageError } from '../errors.js';
import { loadWithProgress, resolveAddr } from './pokes.js';

const MAX_LEN = 1 << 20;

export function register(program: Command): void {
  program
    .command('image')
    .description('bytes and disassembly of kernel code at an address, at a point in time (kcore_dir + pokes)')
    .requiredOption(
      '-i, --input <path>',
      'a `perf record --kcore` directory (or a perf.data file: then only poked bytes are known)',
    )
    .requiredOption('--addr <addr>', 'start address: hex, or a kallsyms symbol[+0xoff]')
    .option('--len <n>', 'number of bytes', '16')
    .option('--time <t>', 'perf time "seconds.micros" (as perf script prints) or raw ns; default: end of recording')
    .option('--json', 'print JSON')
    .option('--text-poke-abi <abi>', "'final' (upstream, type 20) or 'rfc' (the seed's type 19 form)", 'final')
    .addHelpText(
      'after',
      '\nExample:\n  perfpoke image -i perf.data.dir --addr do_sys_open+0x10 --len 5 --time 1000.000004',
    )
    .action(
      async (opts: {
        input: string;
        addr: string;
        len: string;
        time?: string;
        json?: boolean;
        textPokeAbi?: string;
      }) => {
        const len = Number(opts.len);
        if (!Number.isSafeInteger(len) || len <= 0 || len > MAX_LEN)
          throw new UsageError(`--len must be 1..${MAX_LEN}, got '${opts.len}'`);
        let time = CodeImage.END;
        if (opts.time !== undefined) {
          const t = parsePerfTime(opts.time);
          if (t === undefined)
            throw new UsageError(`--time: expected seconds.micros (1000.000001) or ns, got '${opts.time}'`);
          time = t;
        }
        const m = await loadWithProgress(opts.input, opts.textPokeAbi);
        const addr = resolveAddr(m, opts.addr);
        const { bytes, live } = m.image.bytesAt(addr, len, time);
        const at = time === CodeImage.END ? undefined : { time, fileOffset: Number.MAX_SAFE_INTEGER };
        const symbolize = (a: bigint): string => m.symbolizer.symOff(a, at);
        const applied = m.image.pokesIn(addr, addr + BigInt(len), -CodeImage.END, time);
        // runs of existing bytes, each disassembled from its start
        const lines: { addr: string; sym: string; bytes: string; text: string }[] = [];
        let i = 0;
        while (i < len) {
          if (!live[i]) {
            let j = i;
            while (j < len && !live[j]) j++;
            lines.push({
              addr: (addr + BigInt(i)).toString(16),
              sym: symbolize(addr + BigInt(i)),
              bytes: '',
              text: `(no code: ${j - i} bytes)`,
            });
            i = j;
            continue;
          }
          let j = i;
          while (j < len && live[j]) j++;
          for (const insn of disassemble(bytes.subarray(i, j), addr + BigInt(i), symbolize)) {
            lines.push({
              addr: insn.ip.toString(16),
              sym: symbolize(insn.ip),
              bytes: hexBytes(insn.bytes),
              text: insn.text,
            });
          }
          i = j;
        }
        const when = time === CodeImage.END ? 'end of recording' : formatNsTime(time);
        if (opts.json) {
          const out = {
            addr: addr.toString(16),
            len,
            time: time === CodeImage.END ? null : time.toString(),
            bytes: [...bytes].map((b, k) => (live[k] ? b.toString(16).padStart(2, '0') : null)),
            pokesApplied: applied.length,
            insns: lines,
          };
          process.stdout.write(JSON.stringify(out, null, 1) + '\n');
          return;
        }
        const last = applied[applied.length - 1];
        const out = [
          `${addr.toString(16)} ${symbolize(addr) || '?'} len ${len} at ${when}: ${applied.length} poke(s) applied${last ? `, last at ${formatPerfTime(last.poke.time)}` : ''}${m.kcore ? '' : ' (no kcore_dir: only poked bytes are known)'}`,
        ];
        for (const l of lines) out.push(`${l.addr} ${`<${l.sym || '?'}>`.padEnd(28)} ${l.bytes.padEnd(30)} ${l.text}`);
        process.stdout.write(out.join('\n') + '\n');
      },
    );
}
