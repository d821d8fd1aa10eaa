/**
 * Block-to-block links for the flow walker: decode by blocks, not by address
 * lookups. A block ending in a branch remembers the block its branch led to
 * (taken: at the branch's target; fall: at the block's end, after a
 * not-taken jcc or a block cut at the instruction limit), so walking a TNT
 * bit or a direct jump/call needs no Map lookup by a bigint address and no
 * new bigint for the next IP. Links live on the blocks (Block.taken / fall)
 * and hold only while no block was dropped since (BlockCache.epoch): a text
 * poke invalidates blocks exactly as before, and every link with them.
 */
import type { Block } from '../../x86/block-cache.js';
import type { BlockSource } from './flow-types.js';

/**
 * The block at `ip`, reached from `from`'s branch (`taken`) when `from` is
 * given: through its link when that is valid and starts at `ip`, else looked
 * up and linked for next time. The IP may have been set by a packet since
 * the branch; then it is not the branch's successor, and nothing is linked.
 */
export function linkedBlock(src: BlockSource, from: Block | undefined, taken: boolean, ip: bigint): Block {
  const epoch = src.epoch;
  if (from === undefined || epoch === undefined) return src.get(ip);
  if (from.linkEpoch === epoch) {
    const l = taken ? from.taken : from.fall;
    if (l !== undefined) return l.start === ip ? l : src.get(ip);
  } else {
    from.linkEpoch = epoch;
    from.taken = undefined;
    from.fall = undefined;
  }
  const b = src.get(ip);
  if (taken) {
    if (from.insns[from.insns.length - 1]?.target === ip) from.taken = b;
  } else if (from.end === ip) from.fall = b;
  return b;
}
