/**
 * Options several commands share, declared once so their spelling, help and
 * checks agree. (`-i` differs per command: what each accepts is said in its help;
 * the commands that load the kernel as recorded share src/cli/machine-input.ts.)
 */
import type { Command } from 'commander';
import { UsageError } from './errors.js';

export type TextPokeAbi = 'final' | 'rfc';

/** `--json`: the command's output as JSON Lines (README: the JSON convention). */
export function jsonOption(cmd: Command, what = 'print JSON Lines (one object per line) instead of text'): Command {
  return cmd.option('--json', what);
}

function parseTextPokeAbi(v: string): TextPokeAbi {
  if (v !== 'final' && v !== 'rfc') throw new UsageError(`--text-poke-abi: expected final or rfc, got ${v}`);
  return v;
}

/** `--text-poke-abi final|rfc`: how to read record type 19. */
export function textPokeAbiOption(
  cmd: Command,
  what = "read type 19 as 'final' (upstream: CGROUP; TEXT_POKE is 20) or 'rfc' (the seed's TEXT_POKE)",
): Command {
  return cmd.option('--text-poke-abi <abi>', what, parseTextPokeAbi, 'final' as TextPokeAbi);
}

/** `--quiet`: no progress bar on stderr. */
export function quietOption(cmd: Command): Command {
  return cmd.option('--quiet', 'no progress bar on stderr');
}

/** Argument parser: a positive integer, else a usage error naming `flag`. */
export function positiveIntArg(flag: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) <= 0) throw new UsageError(`${flag} ${v}: expected a positive integer`);
    return Number(v);
  };
}

/** Argument parser for repeatable, comma-separable lists (`-e a,b -e c`). */
export function listArg(v: string, prev: string[]): string[] {
  return [...prev, ...v.split(',').filter((s) => s !== '')];
}

/** Argument parser for repeatable, comma-separated lists of positive ids (`-p 1,2`). */
export function idListArg(flag: string) {
  return (v: string, prev: number[] = []): number[] => {
    const ids = v.split(',').filter((s) => s !== '');
    if (ids.length === 0 || ids.some((s) => !/^\d+$/.test(s) || Number(s) <= 0))
      throw new UsageError(`${flag} ${v}: expected a comma-separated list of ids`);
    return [...prev, ...ids.map(Number)];
  };
}
