/**
 * /proc/modules text, copied by `perf record --kcore` to kcore_dir/modules:
 *
 *   e1000 167936 0 - Live 0xffffffffc0340000
 *
 * name, size, refcount, dependencies, state, load address. perf needs the
 * file to exist to accept a kcore_dir at all, even when it is empty.
 */
export interface ModuleEntry {
  name: string;
  size: number;
  addr: bigint;
  state: string;
}

export function parseModules(text: string): ModuleEntry[] {
  const out: ModuleEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 6) continue;
    const addrField = f.find((x, i) => i >= 5 && /^0x[0-9a-fA-F]+$/.test(x));
    const size = Number(f[1]);
    if (!addrField || !Number.isSafeInteger(size)) continue;
    out.push({ name: f[0]!, size, state: f[4]!, addr: BigInt(addrField) });
  }
  return out;
}
