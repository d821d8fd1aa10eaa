import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { featureName } from '../../abi/feature.js';
import {
  readFileFeatures,
  printFeature,
  featureTableOffset,
  type FileFeatures,
} from '../../perfdata/features/index.js';
import { toJsonValue } from '../../perfdata/jsonl-values.js';

/**
 * `perfpoke header -i F`: what `perf report --header-only -i F` prints, from
 * our own decoding of the header and feature sections. `-I` adds the "full
 * only" features like perf's -I.
 */
const LAST_FEATURE = 32; // HEADER_LAST_FEATURE in perf 6.1 (after PMU_CAPS)

/** ctime(3) in local time: "Wed Dec  2 18:19:19 2026". */
export function ctimeString(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getDay()]} ${months[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}`;
}

export function headerLines(ff: FileFeatures, mtime: Date, full: boolean): string[] {
  const h = ff.header;
  const out = ['# ========', `# captured on    : ${ctimeString(mtime)}`, '# header version : 1'];
  out.push(
    `# data offset    : ${h.pipe ? 0 : h.data.offset}`,
    `# data size      : ${h.pipe ? 0 : h.data.size}`,
    `# feat offset    : ${h.pipe ? 0 : featureTableOffset(h)}`,
  );
  const all = ff.features.map((f) => f.data);
  const body = ff.features
    .filter((f) => f.id < LAST_FEATURE)
    .flatMap((f) => printFeature(f.data, { all, full, le: h.le }));
  if (h.pipe) {
    // perf prints the frame first, then each HEADER_FEATURE record as it is processed
    return [...out, '# ========', '#', ...body];
  }
  out.push(...body);
  const have = new Set(h.features);
  const missing: string[] = [];
  for (let bit = 1; bit < LAST_FEATURE; bit++) if (!have.has(bit)) missing.push(featureName(bit) + ' ');
  out.push('# missing features: ' + missing.join(''));
  for (const id of h.features)
    if (id >= LAST_FEATURE) out.push(`# unknown feature ${id} (${featureName(id)}), kept as raw bytes`);
  out.push('# ========', '#');
  return out;
}

export function register(program: Command): void {
  program
    .command('header')
    .description('print the file header and feature sections, as `perf report --header-only`')
    .requiredOption('-i, --input <file>', 'perf.data file (file or pipe mode)')
    .option('-I, --full', 'also print the long features (topologies, caches), like perf -I')
    .option('--json', 'print the decoded header and features as JSON')
    .action(async (opts: { input: string; full?: boolean; json?: boolean }) => {
      const ff = await readFileFeatures(opts.input);
      if (opts.json) {
        const h = ff.header;
        const doc = {
          file: opts.input,
          byteOrder: h.le ? 'little' : 'big',
          pipe: h.pipe,
          dataOffset: h.data.offset,
          dataSize: h.data.size,
          featOffset: h.pipe ? 0 : featureTableOffset(h),
          features: ff.features.map((f) => ({
            id: f.id,
            name: featureName(f.id),
            offset: f.offset,
            size: f.size,
            ...(toJsonValue(f.data) as object),
          })),
        };
        process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
        return;
      }
      const st = await stat(opts.input);
      process.stdout.write(headerLines(ff, st.mtime, !!opts.full).join('\n') + '\n');
    });
}
