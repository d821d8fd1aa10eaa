import type { Command } from 'commander';
import { cp, mkdir, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RecordType } from '../../abi/record-type.js';
import { copyPerfData, type CopyResult } from '../../perfdata/writer-copy.js';
import { UsageError } from '../errors.js';
import { quietOption, textPokeAbiOption } from '../options.js';
import { startProgress } from '../progress.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke inject -i F -o G`: copy a recording, dropping record types,
 * keeping a time window, converting RFC text pokes to the upstream form or
 * changing the byte order. `--strip text_poke` turns a recording "after" the
 * text poke patches into the seed's "before" file.
 */
const NAMES = new Map<string, number>(Object.entries(RecordType).map(([k, v]) => [k.toLowerCase(), v]));

export function parseStrip(s: string): Set<number> {
  const out = new Set<number>();
  for (const name of s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const id = NAMES.get(name.toLowerCase().replace(/^perf_record_/, ''));
    if (id === undefined)
      throw new UsageError(`--strip: unknown record type '${name}' (perf's names, e.g. text_poke, ksymbol, mmap2)`);
    out.add(id);
  }
  return out;
}

/** perf's --time "start,end" in seconds(.fraction); either side may be empty. Returns ns bounds. */
export function parseTimeWindow(s: string): { start: bigint; end: bigint } {
  const m = /^\s*([0-9]*(?:\.[0-9]*)?)\s*,\s*([0-9]*(?:\.[0-9]*)?)\s*$/.exec(s);
  if (!m) throw new UsageError(`--time: expected 'start,end' in seconds (e.g. 1234.5,1235), got '${s}'`);
  const ns = (x: string): bigint | undefined => {
    if (!x || x === '.') return undefined;
    const [sec, frac = ''] = x.split('.');
    return BigInt(sec || '0') * 1_000_000_000n + BigInt(`${frac}000000000`.slice(0, 9));
  };
  const start = ns(m[1]!) ?? 0n;
  const end = ns(m[2]!) ?? (1n << 64n) - 1n;
  if (end < start) throw new UsageError(`--time: end before start in '${s}'`);
  return { start, end };
}

export interface InjectOptions {
  input: string;
  output: string;
  strip?: string;
  time?: string;
  textPokeAbi?: string;
  bigEndian?: boolean;
  quiet?: boolean;
}

/** The whole command, callable in-process (tests, library users). Throws UsageError for bad options. */
export async function inject(opts: InjectOptions): Promise<CopyResult> {
  opts.textPokeAbi ??= 'final';
  if (opts.textPokeAbi !== 'rfc' && opts.textPokeAbi !== 'final')
    throw new UsageError(`--text-poke-abi: 'rfc' or 'final', not '${opts.textPokeAbi}'`);
  const strip = opts.strip ? parseStrip(opts.strip) : undefined;
  const win = opts.time ? parseTimeWindow(opts.time) : undefined;
  let input = opts.input;
  let output = opts.output;
  let kcoreDir: string | undefined;
  if (input !== '-' && (await stat(input)).isDirectory()) {
    // perf record --kcore: DIR/data plus DIR/kcore_dir/{kcore,kallsyms,modules}
    if (!existsSync(join(input, 'data')))
      throw new UsageError(`${input}: a directory input must hold 'data' (perf record --kcore output)`);
    kcoreDir = join(input, 'kcore_dir');
    input = join(input, 'data');
    if (output === '-') throw new UsageError('-o -: a --kcore directory input needs a directory output');
    await mkdir(output, { recursive: true });
    output = join(output, 'data');
  }
  const rfcType = 19;
  const keep =
    strip || win
      ? (raw: { type: number; timestamp(): bigint | undefined }) => {
          // --strip text_poke also drops RFC pokes when they are read as such
          if (
            strip &&
            (strip.has(raw.type) ||
              (opts.textPokeAbi === 'rfc' && raw.type === rfcType && strip.has(RecordType.TEXT_POKE)))
          )
            return false;
          // like perf's --time, the window filters samples; side-band records (COMM, MMAP, KSYMBOL…) stay
          if (win && raw.type === RecordType.SAMPLE) {
            const t = raw.timestamp();
            if (t !== undefined && (t < win.start || t > win.end)) return false;
          }
          return true;
        }
      : undefined;
  const progress = startProgress('inject', 0, opts);
  try {
    const res = await copyPerfData(input, output, {
      bigEndian: opts.bigEndian,
      textPokeAbi: opts.textPokeAbi as 'rfc' | 'final',
      keep,
      progress: progress.update,
    });
    if (kcoreDir && existsSync(kcoreDir)) {
      const dest = join(opts.output, 'kcore_dir');
      await rm(dest, { recursive: true, force: true });
      await cp(kcoreDir, dest, { recursive: true });
    }
    progress.stop();
    return res;
  } finally {
    progress.stop();
  }
}

export function register(program: Command): void {
  const cmd = program
    .command('inject')
    .description('copy a perf.data file, dropping record types, keeping a time window or converting RFC text pokes')
    .option(
      '-i, --input <path>',
      `perf.data file ('-': pipe mode from stdin), or a perf --kcore directory (DIR/data + DIR/kcore_dir); ${INPUT_DEFAULT_HELP}`,
    )
    .hook('preAction', fillDefaultInput)
    .requiredOption(
      '-o, --output <file|dir>',
      "output file ('-' for pipe mode on stdout); a directory when the input is one",
    )
    .option(
      '--strip <types>',
      'drop these record types (comma separated, perf names, case-insensitive): text_poke,ksymbol',
    )
    .option(
      '--time <start,end>',
      "keep samples in this window (perf's --time format, seconds); other records and samples without a time are kept",
    )
    .option('--big-endian', 'write a big-endian file');
  textPokeAbiOption(
    cmd,
    "read type 19 as 'rfc' text pokes and write them as upstream TEXT_POKE (20); 'final' (default) copies as is",
  );
  quietOption(cmd).action(async (opts: InjectOptions) => {
    const res = await inject(opts);
    if (opts.output !== '-')
      process.stderr.write(
        `perfpoke inject: ${res.records} records written, ${res.dropped} dropped${res.converted ? `, ${res.converted} RFC text pokes converted` : ''}\n`,
      );
  });
}
