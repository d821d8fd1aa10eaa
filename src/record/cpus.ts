import { readFileSync } from 'node:fs';

/**
 * Parse a kernel CPU list ("0-3,5,7-8", as in /sys/devices/system/cpu/online).
 * Throws Error on anything else (the caller names the file).
 */
export function parseCpuList(text: string): number[] {
  const out: number[] = [];
  const t = text.trim();
  if (t === '') return out;
  for (const part of t.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`bad CPU list ${JSON.stringify(text)}`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 65536) throw new Error(`bad CPU range ${part}`);
    for (let c = a; c <= b; c++) out.push(c);
  }
  return out;
}

/** The online CPUs: perf's system-wide record opens one event per CPU here. */
export function onlineCpus(path = '/sys/devices/system/cpu/online'): number[] {
  return parseCpuList(readFileSync(path, 'utf8'));
}
