/**
 * Whether perf's itrace sink (itrace-perf.ts) ignores the branches a decoder
 * walk decides (conditional branches, direct jumps and calls, compressed
 * returns): then the decoder may replay runs of TNT bits without reporting
 * them (FlowSink.walkQuiet, src/intelpt/flow/tnt-patterns.ts). The sink
 * uses those branches for branch samples (`b`, `c`, `r`), instruction
 * samples (`i`, whose flags and `tr end` follow them), its call stacks
 * (`g`, `G`, `-F callindent`) and its last-branch rings (`l`, `L`): with
 * none of those, its branch() only ends the instruction period at a trace
 * end, which is not such a branch.
 */
import type { PerfItraceOptions } from './itrace-perf.js';

export function itraceWalkQuiet(o: PerfItraceOptions): boolean {
  return (
    !o.instructions &&
    !o.branches &&
    !o.callchain &&
    !o.addCallchain &&
    !o.lastBranch &&
    !o.addLastBranch &&
    !o.fields.has('callindent')
  );
}
