/**
 * perf's synthesized callchains for `--itrace=g` and `G`
 * (util/thread-stack.c thread_stack__sample and thread_stack__sample_late,
 * fed by the thread stack CallIndent keeps) and how perf script prints them
 * (builtin-script.c process_event with a callchain cursor:
 * sample__fprintf_callchain, one `\t%16lx sym+off (dso)` line an entry).
 */
import { PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER } from '../abi/sample-format.js';
import { callchainEntries } from './script-callchain.js';

/** callchain_context: kernel or user by the kernel's start address. */
const context = (ip: bigint, kernelStart: bigint): bigint =>
  ip < kernelStart ? PERF_CONTEXT_USER : PERF_CONTEXT_KERNEL;

/**
 * thread_stack__sample: the context of `ip`, `ip`, then the thread's return addresses (innermost first,
 * `rets` as a stack: innermost last), a context marker before each change of address space; at most `sz`
 * items, markers included (perf passes callchain_sz + 1).
 */
export function sampleChain(rets: readonly bigint[], ip: bigint, sz: number, kernelStart: bigint): bigint[] {
  if (sz < 2) return [];
  return pushReturns([context(ip, kernelStart), ip], rets, 1, sz, kernelStart);
}

/**
 * Append the return addresses from the j-th innermost outwards, a context marker before each change of
 * address space (the chain's first entry, when there is one, is the current context), at most sz items.
 */
function pushReturns(chain: bigint[], rets: readonly bigint[], j: number, sz: number, kernelStart: bigint): bigint[] {
  let last = chain[0];
  for (; chain.length < sz && j <= rets.length; j++) {
    const r = rets[rets.length - j]!;
    const c = context(r, kernelStart);
    if (c !== last) {
      if (chain.length >= sz - 1) break;
      chain.push(c);
      last = c;
    }
    chain.push(r);
  }
  return chain;
}

/**
 * thread_stack__sample_late, for a sample written some time after its event (`G` on another event's
 * sample): the kernel return addresses above the first user one, or above the sample's own ip, are
 * dropped (the thread went on after the event); with none left, the sample's context and ip alone.
 */
export function sampleChainLate(rets: readonly bigint[], ip: bigint, sz: number, kernelStart: bigint): bigint[] {
  if (sz < 2) return [];
  const ipContext = context(ip, kernelStart);
  let j = 1;
  for (; j <= rets.length; j++) {
    const r = rets[rets.length - j]!;
    const c = context(r, kernelStart);
    if (c === PERF_CONTEXT_USER || (c === ipContext && r === ip)) break;
  }
  // an empty chain has no context yet: its first entry always gets its marker
  const chain = pushReturns([], rets, j, sz, kernelStart);
  return chain.length ? chain : [ipContext, ip];
}

/**
 * perf script's callchain lines for a chain (markers dropped, at most `maxStack` entries): each entry as
 * `\t` and its address in 16 columns, then `sym(addr)` (the sym+off and dso text -F asks for), a newline.
 */
export function chainLines(chain: bigint[], maxStack: number, sym: (addr: bigint) => string): string {
  let s = '';
  for (const e of callchainEntries(chain, maxStack)) s += `\t${e.ip.toString(16).padStart(16)}${sym(e.ip)}\n`;
  return s;
}
