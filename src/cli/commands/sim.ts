import type { Command } from 'commander';
import { simulate } from '../../sim/simulate.js';
import { UsageError } from '../errors.js';
import { jsonLine } from '../../format/json-lines.js';

/**
 * `perfpoke sim -o DIR`: write a synthetic intel_pt recording with known
 * ground truth (see src/sim/simulate.ts and docs/intel-pt-flow.md).
 */
function int(name: string, lo: number, hi: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < lo || n > hi)
      throw new UsageError(`${name} must be an integer in ${lo}..${hi}, got ${JSON.stringify(v)}`);
    return n;
  };
}

function ratio(v: string): [number, number] {
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(v);
  const r: [number, number] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!(r[0] >= 1 && r[1] >= 1 && r[0] / r[1] < 512))
    throw new UsageError(`--tsc-ctc must be N/D with N, D >= 1 and N/D < 512, got ${JSON.stringify(v)}`);
  return r;
}

export function register(program: Command): void {
  program
    .command('sim')
    .description(
      'simulate kernel execution with jump-label flips and write an intel_pt recording (perf --kcore layout) ' +
        'with ground truth',
    )
    .requiredOption('-o, --output <dir>', 'output directory (replaced)')
    .option('--seed <n>', 'random seed', int('--seed', 0, 2 ** 32 - 1), 1)
    .option('--cpus <n>', 'simulated CPUs', int('--cpus', 1, 256), 2)
    .option('--flips <n>', 'jump-label flips (each one TEXT_POKE)', int('--flips', 0, 100000), 4)
    .option('--size <n>', 'instructions to execute, all CPUs together', int('--size', 1000, 2 ** 31), 200000)
    .option('--sites <n>', 'jump-label sites in the code', int('--sites', 1, 1000), 12)
    .option('--psb-period <bytes>', 'trace bytes between PSBs', int('--psb-period', 64, 1 << 24), 1024)
    .option('--no-text-poke', 'leave TEXT_POKE records out (the "lost pokes" file)')
    .option('--no-truth', 'do not write truth.bin (for very large runs)')
    .option('--no-ret-compression', 'emit a TIP for every return (config noretcomp=1)')
    .option('--no-trampoline', 'do not create (and call) a trampoline during the run')
    .option('--mid-burst-psb', 'emit PSB+ (with FUP of the next instruction) inside kernel bursts too')
    .option('--timeless', 'no TSC bit in the intel_pt config: perf decodes untimed and applies every poke first')
    .option(
      '--tasks <n>',
      'processes to schedule: COMM, ITRACE_START and SWITCH_CPU_WIDE records (perf record -a)',
      int('--tasks', 0, 1000),
      0,
    )
    .option('--switches <n>', 'context switches per CPU with --tasks', int('--switches', 0, 100000), 8)
    .option('--switch-to', 'with --tasks: switches run through __schedule/__switch_to (perf uses sync_switch)')
    .option(
      '--samples <n>',
      'cycles:k samples per CPU (an event perf script prints among the itrace samples)',
      int('--samples', 0, 1000000),
      0,
    )
    .option('--user-code', 'trace user mode too, in code the recording does not hold (no ELF)')
    .option('--power', 'power-event packets (CBR in PSB+ and at frequency changes, PWRE/EXSTOP/PWRX) and pwr_evt')
    .option(
      '--mtc-period <n>',
      'MTC packets every 2^n crystal clock ticks, and TMA after each TSC',
      int('--mtc-period', 0, 15),
    )
    .option(
      '--cyc <thresh>',
      'CYC packets with this cyc_thresh (0: every cycle, n: 2^(n-1) cycles)',
      int('--cyc', 0, 15),
    )
    .option('--tsc-ctc <n/d>', 'TSC ticks per crystal clock tick in AUXTRACE_INFO (default 2/1)', ratio)
    .option('--json', 'print the summary as JSON')
    .action(
      (o: {
        output: string;
        seed: number;
        cpus: number;
        flips: number;
        size: number;
        sites: number;
        psbPeriod: number;
        textPoke: boolean;
        truth: boolean;
        retCompression: boolean;
        timeless?: boolean;
        midBurstPsb?: boolean;
        trampoline: boolean;
        tasks: number;
        switches: number;
        switchTo?: boolean;
        samples: number;
        userCode?: boolean;
        power?: boolean;
        mtcPeriod?: number;
        cyc?: number;
        tscCtc?: [number, number];
        json?: boolean;
      }) => {
        if (o.switchTo && !o.tasks) throw new UsageError('sim: --switch-to needs --tasks N (N > 0)');
        const t0 = performance.now();
        const s = simulate({
          out: o.output,
          seed: o.seed,
          cpus: o.cpus,
          flips: o.flips,
          size: o.size,
          sites: o.sites,
          psbPeriod: o.psbPeriod,
          textPokes: o.textPoke,
          truth: o.truth,
          retCompression: o.retCompression,
          timeless: o.timeless,
          midBurstPsb: o.midBurstPsb,
          trampoline: o.trampoline,
          tasks: o.tasks,
          switches: o.switches,
          switchTo: o.switchTo,
          samples: o.samples,
          userCode: o.userCode,
          power: o.power,
          mtcPeriod: o.mtcPeriod,
          cycThresh: o.cyc,
          tscCtc: o.tscCtc,
        });
        const secs = (performance.now() - t0) / 1000;
        if (o.json) {
          process.stdout.write(jsonLine({ type: 'sim_summary', ...s }));
          return;
        }
        const lines = [
          `wrote ${o.output} in ${secs.toFixed(2)} s: ${s.instructions} instructions on ${s.cpus} CPUs, ` +
            `${s.flips.length} flips (${s.textPokes ? 'with' : 'without'} TEXT_POKE records)`,
          ...s.perCpu.map(
            (c) =>
              `  cpu ${c.cpu}: ${c.insns} instructions, ${c.bursts} bursts, ${c.traps} INT3 traps, ` +
              `${c.traceBytes} trace bytes in ${c.buffers} buffers`,
          ),
          ...s.flips.map((f) => `  flip site ${f.addr} (${f.len} bytes) → ${f.to ? 'jmp' : 'nop'} at time ${f.time}`),
          `decode with: perf script -i ${o.output} --itrace=e   or   perfpoke decode -i ${o.output} --itrace=e`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      },
    );
}
