/**
 * The window a zstd frame asks the decoder for (RFC 8878 §3.1.1.1), read before
 * handing the frame to fzstd: fzstd allocates the declared window up front
 * (up to 2 GiB), so a flipped bit in a COMPRESSED record's frame header could
 * make a 4 KB file allocate gigabytes. `perf record -z` uses levels 1–22;
 * zstd's windowLog is at most 23 (8 MiB) up to level 19, which is what we accept.
 */
export const ZSTD_MAX_WINDOW = 8 << 20;

/** The declared window in bytes, or undefined when `d` does not start a zstd frame (or is too short to say). */
export function zstdFrameWindow(d: Uint8Array): number | undefined {
  if (d.length < 6 || d[0] !== 0x28 || d[1] !== 0xb5 || d[2] !== 0x2f || d[3] !== 0xfd) return undefined;
  const flg = d[4] ?? 0;
  const singleSegment = (flg >> 5) & 1;
  if (!singleSegment) {
    const wd = d[5] ?? 0;
    const base = 2 ** (10 + (wd >> 3));
    return base + (base / 8) * (wd & 7);
  }
  // single segment: no window descriptor, the window is the frame content size
  const fcf = flg >> 6;
  const dictBytes = [0, 1, 2, 4][flg & 3] ?? 0;
  const sizeBytes = fcf ? 1 << fcf : 1;
  const at = 5 + dictBytes;
  if (d.length < at + sizeBytes) return undefined;
  let v = 0;
  for (let i = 0; i < sizeBytes; i++) v += (d[at + i] ?? 0) * 2 ** (8 * i);
  return fcf === 1 ? v + 256 : v;
}
