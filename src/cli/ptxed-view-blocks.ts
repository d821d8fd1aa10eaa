/**
 * The block decoder half of the ptxed view (src/cli/ptxed-view.ts): ptxed's
 * `--block:*` options, the sink that groups the flow into libipt's blocks
 * (src/intelpt/ptxed/block-walk.ts) and the `--stat` lines.
 */
import { BlockCache } from '../x86/block-cache.js';
import { BlockGrouping } from '../intelpt/ptxed/block-walk.js';
import type { CodeView } from '../intelpt/ptxed/block-cache-model.js';
import { ptxedBlockTextSink, ptxedInsnOffsetSink, type PtxedBlockTextOptions } from '../format/ptxed-blocks.js';

/** A flat image segment: code bytes at an address (ptxed's --raw FILE:ADDR). */
export interface FlatSegment {
  addr: bigint;
  bytes: Uint8Array;
}

export const PTXED_BLOCK_OPTIONS = ['--block:show-blocks', '--block:end-on-call', '--block:end-on-jump'] as const;
export const PTXED_STAT_OPTIONS = ['--stat', '--stat:insn', '--stat:blocks'] as const;

/** The sections of the view (one per image) and their instructions, as libipt's image gives them. */
export function segmentCode(segs: readonly FlatSegment[]): CodeView {
  const section = (ip: bigint): number | undefined => {
    const k = segs.findIndex((s) => ip >= s.addr && ip < s.addr + BigInt(s.bytes.length));
    return k < 0 ? undefined : k;
  };
  const code = new BlockCache((addr, len) => {
    const k = section(addr);
    const s = k === undefined ? undefined : segs[k];
    if (!s) return undefined;
    const o = Number(addr - s.addr);
    return s.bytes.subarray(o, Math.min(s.bytes.length, o + len));
  });
  return { section, insn: (ip) => code.get(ip).insns[0] };
}

/** The block decoder's sink for the options given (`flags` holds ptxed's options as given). */
export function blockView(
  line: (s: string) => void,
  segs: readonly FlatSegment[],
  flags: ReadonlySet<string>,
  text: PtxedBlockTextOptions,
): BlockGrouping {
  const out = ptxedBlockTextSink(line, {
    ...text,
    showBlocks: flags.has('--block:show-blocks'),
    numbered: PTXED_STAT_OPTIONS.some((o) => flags.has(o)),
  });
  return new BlockGrouping(out, segmentCode(segs), {
    endOnCall: flags.has('--block:end-on-call'),
    endOnJump: flags.has('--block:end-on-jump'),
  });
}

/**
 * The instruction decoder's view: libipt 2.3's pt_insn_next walks the
 * blocks of the block cache too (the block decoder's, without flags), which
 * shows in its offsets (`--offset`: ptxedInsnOffsetSink) and in the error a
 * cache fill reports when it meets an entry of another execution mode.
 */
export function insnView(
  line: (s: string) => void,
  segs: readonly FlatSegment[],
  text: PtxedBlockTextOptions,
): BlockGrouping {
  const out = text.offset ? ptxedInsnOffsetSink(line, text) : ptxedBlockTextSink(line, { ...text, showBlocks: false });
  return new BlockGrouping(out, segmentCode(segs), { endOnCall: false, endOnJump: false });
}

/** ptxed's print_stats: what --stat/--stat:insn/--stat:blocks select (--stat alone: all the decoder has). */
export function statLines(flags: ReadonlySet<string>, blockDecoder: boolean, insns: number, blocks: number): string[] {
  let insn = flags.has('--stat:insn');
  let blk = flags.has('--stat:blocks');
  if (flags.has('--stat') && !insn && !blk) {
    insn = true;
    blk = blockDecoder;
  }
  return [...(insn ? [`insn: ${insns}.`] : []), ...(blk ? [`blocks:\t${blocks}.`] : [])];
}
