import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every .ts module below `dir` (tests excluded): what the layering and import-cycle tests scan. */
export function sourceModules(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) sourceModules(p, out);
    else if (n.endsWith('.ts') && !n.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
