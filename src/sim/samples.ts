/**
 * `cycles:k` samples for a simulated recording: the other event a `perf
 * record -e intel_pt//k -e cycles:k` recording holds, which `perf script
 * --itrace=…` prints among the synthesized samples. Each sample is taken at
 * an instruction the CPU really executed (from the run's ground truth), in
 * the task running there then (src/sim/tasks.ts), with a made-up period.
 */
import type { ByteWriter } from '../io/byte-writer.js';
import { emptyAttr, PerfType, withAttrFlag, type EventAttr } from '../abi/event-attr.js';
import { SampleType } from '../abi/sample-format.js';
import { RecordType, PERF_RECORD_MISC_KERNEL } from '../abi/record-type.js';
import type { CpuRun } from './executor.js';
import { Rng } from './rng.js';
import { IDLE, type TaskPlan, type TaskRecord } from './tasks.js';

/** The task on `cpu` at `tsc` in the plan (the idle task without one). */
function taskAt(plan: TaskPlan | undefined, cpu: number, tsc: number): { pid: number; tid: number } {
  const c = plan?.perCpu.find((x) => x.cpu === cpu);
  if (!c) return IDLE;
  let cur = c.first;
  for (const s of c.switches) if (s.tsc <= tsc) cur = s.next;
  return cur;
}

/**
 * `perCpu` SAMPLE records per CPU (sample_type IDENTIFIER|IP|TID|TIME|CPU|PERIOD), identified by
 * `ids[cpu]`. Needs each run's ground truth.
 */
export function cyclesSamples(
  runs: readonly CpuRun[],
  o: { seed: number; perCpu: number; base: bigint; ids: readonly bigint[]; plan: TaskPlan | undefined },
): TaskRecord[] {
  const rng = new Rng(o.seed ^ 0xc7c1e5);
  const out: TaskRecord[] = [];
  for (const r of runs) {
    const n = r.truthOff?.length ?? 0;
    if (!n || !r.truthTsc || !r.truthOff) continue;
    const picks = new Set<number>();
    for (let k = 0; k < o.perCpu; k++) picks.add(rng.int(0, n - 1));
    for (const i of [...picks].sort((a, b) => a - b)) {
      const tsc = r.truthTsc[i]!;
      const ip = o.base + BigInt(r.truthOff[i]!);
      const t = taskAt(o.plan, r.cpu, tsc);
      const period = BigInt(10_000 + rng.int(0, 90_000));
      const id = o.ids[Math.min(r.cpu, o.ids.length - 1)]!;
      out.push({
        tsc,
        type: RecordType.SAMPLE,
        misc: PERF_RECORD_MISC_KERNEL,
        body: (b: ByteWriter, time: bigint) => {
          b.u64(id).u64(ip).u32(t.pid).u32(t.tid).u64(time).u32(r.cpu).u32(0).u64(period);
        },
      });
    }
  }
  return out.sort((a, b) => a.tsc - b.tsc);
}

/** The `cycles:k` event: hardware CPU cycles, kernel only, with IDENTIFIER so every event's ids sit at one place. */
export function cyclesAttr(): EventAttr {
  const a = emptyAttr();
  a.type = PerfType.HARDWARE;
  a.config = 0n; // PERF_COUNT_HW_CPU_CYCLES
  a.samplePeriod = 100_000n;
  a.sampleType =
    SampleType.IDENTIFIER | SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.CPU | SampleType.PERIOD;
  let f = 0n;
  for (const n of ['disabled', 'exclude_user', 'exclude_hv', 'sample_id_all'] as const) f = withAttrFlag(f, n);
  a.flags = f;
  return a;
}
