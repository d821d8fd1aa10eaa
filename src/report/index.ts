/** perfpoke report as a library: gather a recording's facts, render them as one self-contained HTML page. */
export { gatherReport, type ReportData, type ReportPoke, type ReportSite, type ReportError } from './gather.js';
export { reportHtml, inertJson, uplotAssets } from './page.js';

import type { CollectOptions } from '../export/collect.js';
import { gatherReport } from './gather.js';
import { reportHtml } from './page.js';

/** The report page of one recording (a perf.data file or a `perf record --kcore` directory). */
export async function reportOf(input: string, opts: CollectOptions = {}): Promise<{ html: string; pokes: number }> {
  const data = await gatherReport(input, opts);
  return { html: reportHtml(data), pokes: data.pokes.length };
}
