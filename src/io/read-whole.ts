/**
 * A whole file's bytes, for files whose size stat does not tell (procfs:
 * /proc/kallsyms reports 0 and hands out about a page per read()).
 * readFileSync reads such a file in 64 KiB buffers, one per read() call,
 * and joins them: for the 5 MB of /proc/kallsyms that is ~1400 buffers
 * (90 MB allocated) and a copy, three times the cost of the kernel's reads.
 * Here one buffer grows by doubling.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const FIRST = 1 << 24;

/** Throws the fs error of a missing or unreadable file. */
export function readWholeFile(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    // one byte past a stated size, so the read that finds the end needs no larger buffer
    let buf = Buffer.allocUnsafeSlow(size > 0 ? size + 1 : FIRST);
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        const bigger = Buffer.allocUnsafeSlow(buf.length * 2);
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) return buf.subarray(0, n);
      n += got;
    }
  } finally {
    closeSync(fd);
  }
}
