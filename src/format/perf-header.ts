/**
 * What `perf report --header-only` prints (perf 6.1 header.c
 * perf_header__fprintf_info and the features' print functions, which
 * header-features.ts holds), and the JSON Lines form of a header.
 */
import { featureName } from '../abi/feature.js';
import { featureTableOffset, type FileFeatures } from '../perfdata/features/index.js';
import { printFeature } from './header-features.js';
import { type HostEnv, unreadFeatureLines } from './header-unread.js';
import { toJsonValue } from '../perfdata/jsonl-values.js';
import { jsonLine } from './json-lines.js';

const LAST_FEATURE = 32; // HEADER_LAST_FEATURE in perf 6.1 (after PMU_CAPS)

/** ctime(3) in local time: "Wed Dec  2 18:19:19 2026". */
export function ctimeString(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p2 = (n: number) => String(n).padStart(2, '0');
  return (
    `${days[d.getDay()]} ${months[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ` +
    `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}`
  );
}

/**
 * `host`: what perf prints for unread CPUID / PMU_MAPPINGS sections of a
 * damaged file (`ff.unread`, from readFileFeatures' `partial` mode).
 */
export function headerLines(ff: FileFeatures, mtime: Date, full: boolean, host: HostEnv = {}): string[] {
  const h = ff.header;
  const out = ['# ========', `# captured on    : ${ctimeString(mtime)}`, '# header version : 1'];
  out.push(
    `# data offset    : ${h.pipe ? 0 : h.data.offset}`,
    `# data size      : ${h.pipe ? 0 : h.data.size}`,
    `# feat offset    : ${h.pipe ? 0 : featureTableOffset(h)}`,
  );
  const all = ff.features.map((f) => f.data);
  const ctx = { all, full, le: h.le };
  if (h.pipe) {
    const body = ff.features.filter((f) => f.id < LAST_FEATURE).flatMap((f) => printFeature(f.data, ctx));
    // perf prints the frame first, then each HEADER_FEATURE record as it is processed
    return [...out, '# ========', '#', ...body];
  }
  // table order; a section perf could not read prints from its empty perf_env
  const byId = new Map(ff.features.map((f) => [f.id, f]));
  const unread = new Set(ff.unread ?? []);
  for (const id of h.features) {
    if (id >= LAST_FEATURE) continue;
    const f = byId.get(id);
    if (f) out.push(...printFeature(f.data, ctx));
    else if (unread.has(id)) out.push(...unreadFeatureLines(id, full, host));
  }
  const have = new Set(h.features);
  const missing: string[] = [];
  for (let bit = 1; bit < LAST_FEATURE; bit++) if (!have.has(bit)) missing.push(`${featureName(bit)} `);
  out.push(`# missing features: ${missing.join('')}`);
  for (const id of h.features)
    if (id >= LAST_FEATURE) out.push(`# unknown feature ${id} (${featureName(id)}), kept as raw bytes`);
  out.push('# ========', '#');
  return out;
}

/**
 * JSON Lines: the `file_header`, then one `feature` per feature section,
 * its decoded `value` as docs/header.md describes it (u64 as "0x…").
 */
export function* headerJsonLines(file: string, ff: FileFeatures): Generator<string> {
  const h = ff.header;
  yield jsonLine({
    type: 'file_header',
    file,
    byte_order: h.le ? 'little' : 'big',
    pipe: h.pipe,
    data_offset: h.data.offset,
    data_size: h.data.size,
    feat_offset: h.pipe ? 0 : featureTableOffset(h),
    features: ff.features.length,
  });
  for (const f of ff.features)
    yield jsonLine({
      type: 'feature',
      id: f.id,
      name: featureName(f.id),
      offset: f.offset,
      size: f.size,
      value: toJsonValue(f.data),
    });
}
