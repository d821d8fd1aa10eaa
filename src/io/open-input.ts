/**
 * Opening an input file for reading. A directory given where a perf.data file
 * is expected fails at once with a Node-style error (code, path) that the CLI
 * prints as one line, instead of an EISDIR from the first read.
 */
import { open, type FileHandle } from 'node:fs/promises';

export async function openInput(path: string): Promise<FileHandle> {
  const fh = await open(path, 'r');
  if ((await fh.stat()).isDirectory()) {
    await fh.close();
    const e: NodeJS.ErrnoException = new Error(
      'is a directory, not a perf.data file (a `perf record --kcore` directory holds it as DIR/data)',
    );
    e.code = 'EISDIR';
    e.path = path;
    throw e;
  }
  return fh;
}
