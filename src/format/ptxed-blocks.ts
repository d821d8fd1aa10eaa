/**
 * The text of `ptxed --block-decoder --no-inst` (ptxed.c print_block): each
 * block's instruction addresses (`? ` before speculative ones), after a
 * `[block]` line with `--block:show-blocks` — `[block N]`, N in hex counting
 * from 1, when statistics are collected. Events, errors and the end of the
 * trace read as in the instruction view (src/format/ptxed.ts).
 */
import type { BlockInsn, PtxedBlockSink } from '../intelpt/ptxed/block-walk.js';
import { ptxedTextSink, type PtxedTextOptions } from './ptxed.js';

export interface PtxedBlockTextOptions extends PtxedTextOptions {
  /** ptxed --block:show-blocks. */
  showBlocks?: boolean;
  /** Statistics are collected (--stat, --stat:*): blocks are numbered. */
  numbered?: boolean;
}

const h16 = (v: bigint): string => v.toString(16).padStart(16, '0');

/** A PtxedBlockSink writing ptxed's lines through `line`. */
export function ptxedBlockTextSink(line: (s: string) => void, o: PtxedBlockTextOptions = {}): PtxedBlockSink {
  const flow = ptxedTextSink(line, o);
  const sink: PtxedBlockSink = { event: flow.event, error: flow.error, block: () => {} };
  if (flow.end) sink.end = flow.end;
  if (o.quiet) return sink;
  sink.block = (insns, index) => {
    if (o.showBlocks) line(o.numbered ? `[block ${index.toString(16)}]` : '[block]');
    // (ptxed prints the offset before pt_blk_next on each line of the block)
    const off = o.offset ? `${h16(BigInt(insns[0]?.offset ?? 0))}  ` : '';
    for (const i of insns)
      line(`${off}${o.time ? `${h16(i.time)}  ` : ''}${i.speculative ? `? ${h16(i.ip)}` : h16(i.ip)}`);
  };
  return sink;
}

/**
 * The instruction decoder's lines with `--offset`: libipt 2.3's pt_insn_next
 * walks a whole block at its first instruction, so the offset before the
 * block's first instruction is the one before it, and the others show the
 * offset after the block (what the next instruction, event or error sees).
 */
export function ptxedInsnOffsetSink(line: (s: string) => void, o: PtxedTextOptions = {}): PtxedBlockSink {
  if (o.quiet) return ptxedBlockTextSink(line, o);
  const flow = ptxedTextSink(line, o);
  let pending: readonly BlockInsn[] = [];
  const release = (after: number | undefined): void => {
    pending.forEach((i, k) => {
      const off = k === 0 ? i.offset : (after ?? i.offset);
      line(`${h16(BigInt(off))}  ${o.time ? `${h16(i.time)}  ` : ''}${i.speculative ? `? ${h16(i.ip)}` : h16(i.ip)}`);
    });
    pending = [];
  };
  const sink: PtxedBlockSink = {
    block: (insns) => {
      // (an empty block, before a TIP.PGD at its IP, walks nothing: the offset after waits for the event)
      if (!insns.length) return;
      release(insns[0]?.offset);
      pending = insns;
    },
    event: (ev, offset) => {
      release(offset);
      flow.event(ev, offset);
    },
    error: (offset, ip, code, kind) => {
      release(offset);
      flow.error(offset, ip, code, kind);
    },
    status: (offset) => release(offset),
    end: () => {
      release(undefined);
      flow.end?.();
    },
  };
  return sink;
}
