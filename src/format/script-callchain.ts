/**
 * perf's callchain walk for `perf script` (thread__resolve_callchain_sample
 * without symbols): which entries of a SAMPLE's callchain are printed and in
 * which address space each is.
 */
import {
  PERF_CONTEXT_MAX,
  PERF_CONTEXT_HV,
  PERF_CONTEXT_KERNEL,
  PERF_CONTEXT_USER,
  PERF_CONTEXT_GUEST,
  PERF_CONTEXT_GUEST_KERNEL,
  PERF_CONTEXT_GUEST_USER,
} from '../abi/sample-format.js';

const CONTEXTS = new Set([
  PERF_CONTEXT_HV,
  PERF_CONTEXT_KERNEL,
  PERF_CONTEXT_USER,
  PERF_CONTEXT_GUEST,
  PERF_CONTEXT_GUEST_KERNEL,
  PERF_CONTEXT_GUEST_USER,
]);
/** perf's PERF_MAX_STACK_DEPTH, the default --max-stack of perf script. */
const MAX_STACK = 127;

/**
 * thread__resolve_callchain_sample without symbols: context markers switch
 * between kernel and user space and are not printed, an unknown marker
 * discards the whole chain, at most 127 entries. A user-space entry prints as
 * its offset in the mapped file when a map covers it (sample__fprintf_callchain).
 */
export function resolveCallchain(
  chain: bigint[],
  userAddress: (ip: bigint) => bigint = (ip) => ip,
  maxStack = MAX_STACK,
): bigint[] {
  return callchainEntries(chain, maxStack).map((e) => (e.user ? userAddress(e.ip) : e.ip));
}

/** The entries resolveCallchain prints, each with the address space it is in. */
export function callchainEntries(chain: bigint[], maxStack = MAX_STACK): { ip: bigint; user: boolean }[] {
  const out: { ip: bigint; user: boolean }[] = [];
  let user = true; // perf starts in PERF_RECORD_MISC_USER
  for (const ip of chain) {
    if (out.length >= maxStack) break;
    if (ip >= PERF_CONTEXT_MAX) {
      if (ip === PERF_CONTEXT_KERNEL) user = false;
      else if (ip === PERF_CONTEXT_USER) user = true;
      else if (!CONTEXTS.has(ip)) return [];
      else user = false;
      continue;
    }
    out.push({ ip, user });
  }
  return out;
}
