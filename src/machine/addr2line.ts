/**
 * binutils `addr2line -e FILE -a -i -f`, asked one address at a time and
 * answered synchronously, the way perf 6.1 (built without libbfd, as
 * Debian's is) finds the inlined functions at a DWARF-unwound frame
 * (util/srcline.c addr2line: one long-lived addr2line per dso, each
 * question followed by a junk one, ",", whose "??" / "??:0" answer marks
 * the end of the records).
 *
 * Node cannot read a child's pipe synchronously, so a worker thread owns
 * the addr2line processes and the caller blocks on Atomics.wait until the
 * worker has written the answer into shared memory.
 */
import { Worker } from 'node:worker_threads';

/** One addr2line record: a function and its "file:line". */
export interface Addr2LineRecord {
  fn: string;
  where: string;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const flag = new Int32Array(workerData.sab, 0, 2);
const bytes = new Uint8Array(workerData.sab, 8);
const kids = new Map();
function kid(file) {
  let k = kids.get(file);
  if (k) return k;
  const p = spawn('addr2line', ['-e', file, '-a', '-i', '-f'], { stdio: ['pipe', 'pipe', 'ignore'] });
  k = { p, buf: '', waiting: null, dead: false };
  p.stdout.setEncoding('utf8');
  p.stdout.on('data', (d) => { k.buf += d; if (k.waiting) k.waiting(); });
  const die = () => { k.dead = true; if (k.waiting) k.waiting(); };
  p.on('error', die);
  p.on('exit', die);
  p.stdin.on('error', die);
  kids.set(file, k);
  return k;
}
function reply(v) {
  const b = Buffer.from(JSON.stringify(v));
  const n = Math.min(b.length, bytes.length);
  bytes.set(b.subarray(0, n));
  Atomics.store(flag, 1, n);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
parentPort.on('message', ({ file, addr }) => {
  const k = kid(file);
  if (k.dead) return reply(null);
  // -a prints each question's address first: the answer is the lines between our address and the
  // junk question's (0), so a stray line can never shift later answers
  const want = '0x' + addr;
  const lines = [];
  let mine = false;
  const pump = () => {
    for (;;) {
      const i = k.buf.indexOf('\\n');
      if (i < 0) break;
      const line = k.buf.slice(0, i).trim();
      k.buf = k.buf.slice(i + 1);
      if (/^0x[0-9a-f]+$/.test(line)) {
        if (line === want && !mine) { mine = true; continue; }
        if (mine && line === '0x0000000000000000') { k.waiting = null; return reply(records(lines)); }
        continue;
      }
      if (mine) lines.push(line);
    }
    if (k.dead) { k.waiting = null; reply(null); }
  };
  k.waiting = pump;
  k.p.stdin.write(addr + '\\n,\\n');
  pump();
});
// perf's read_addr2line_record: a record whose place is "??:0" (or has no ':') ends the answer;
// when it is the first one the address has no answer at all
function records(lines) {
  const out = [];
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const where = lines[i + 1];
    if (where === '??:0' || !where.includes(':')) break;
    out.push({ fn: lines[i], where });
  }
  return out;
}
`;

export class Addr2Line {
  private worker: Worker | undefined;
  private readonly sab = new SharedArrayBuffer(8 + (1 << 20));
  private readonly flag = new Int32Array(this.sab, 0, 2);
  private readonly cache = new Map<string, Addr2LineRecord[] | undefined>();
  private broken = false;

  /** The records for addr in file (innermost first); undefined when addr2line cannot run. */
  lookup(file: string, addr: bigint): Addr2LineRecord[] | undefined {
    const key = `${file}\0${addr}`;
    if (this.cache.has(key)) return this.cache.get(key);
    const r = this.ask(file, addr);
    this.cache.set(key, r);
    return r;
  }

  private ask(file: string, addr: bigint): Addr2LineRecord[] | undefined {
    if (this.broken) return undefined;
    if (!this.worker) {
      this.worker = new Worker(WORKER, { eval: true, workerData: { sab: this.sab } });
      this.worker.unref();
      // a worker that dies (no addr2line, a bug) leaves frames without inlined functions, never a crash
      this.worker.on('error', () => {
        this.broken = true;
      });
    }
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ file, addr: addr.toString(16).padStart(16, '0') });
    // 20 s: a first question loads the file's DWARF; a stuck addr2line must not hang the run
    if (Atomics.wait(this.flag, 0, 0, 20000) === 'timed-out') {
      this.broken = true;
      return undefined;
    }
    const n = Atomics.load(this.flag, 1);
    const text = Buffer.from(new Uint8Array(this.sab, 8, n)).toString('utf8');
    const v = JSON.parse(text) as Addr2LineRecord[] | null;
    return v ?? undefined;
  }

  /** Stop the worker (and with it the addr2line processes). */
  close(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}
