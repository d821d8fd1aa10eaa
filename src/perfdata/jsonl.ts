import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { RecordType, RFC_TEXT_POKE_TYPE, PERF_RECORD_MISC_KERNEL } from '../abi/record-type.js';
import { featureName } from '../abi/feature.js';
import { emptyAttr, type EventAttr } from '../abi/event-attr.js';
import type { PerfRecord } from './records/index.js';
import { featureIdOf, type FeatureData } from './features/index.js';
import { attrIndexer, openInput } from './writer-copy.js';
import { PerfDataWriter, type WriterAttr } from './writer.js';
import { fromHex, toJsonValue, u64FromJson } from './jsonl-values.js';

/**
 * perf.data as JSON lines (docs/writer.md):
 *
 *   {"kind":"perf.data","format":"perfpoke-jsonl","version":1,"byteOrder":"little","pipe":false,
 *    "attrs":[{"name","attr":{…},"ids":["0x8"]}]}
 *   {"kind":"feature","id":3,"name":"HOSTNAME","value":{"kind":"hostname","value":"vm"}}
 *   {"kind":"mmap2","type":10,"misc":2,"attr":0,"pid":…,"sampleId":{…}}
 *   {"kind":"text_poke","type":20,"misc":1,"addr":"0xffffffff81000000","old":"0f1f440000","new":"e9…",
 *    "time":"0x…","cpu":0}
 *
 * u64 values are "0x…" hex strings, byte arrays plain hex strings, other
 * numbers JSON numbers. Record fields are the reader's decoded fields minus
 * fileOffset; the sample_id trailer is the nested `sampleId` object, except for
 * text_poke, ksymbol, aux, lost_samples and switch, whose bodies share no field
 * name with it: there its fields sit at the top level. Unknown record types are
 * {"kind":"unknown","type":N,"misc":N,"bytes":"…"}.
 */
export const JSONL_FORMAT = 'perfpoke-jsonl';

const FLAT_SAMPLE_ID = new Set(['text_poke', 'ksymbol', 'aux', 'lost_samples', 'switch']);
const SAMPLE_ID_KEYS = ['pid', 'tid', 'time', 'id', 'streamId', 'cpu', 'cpuRes', 'identifier'];
/** Keys whose hex strings are byte arrays. */
const BYTES_KEYS = new Set([
  'data',
  'buildId',
  'buildIdRaw',
  'raw',
  'tag',
  'bytes',
  'old',
  'new',
  'oldBytes',
  'newBytes',
  'aux',
  'tail',
]);
/** Keys that are always text, even when they look like hex. */
const STRING_KEYS = new Set([
  'comm',
  'filename',
  'name',
  'path',
  'msg',
  'unit',
  'cpus',
  'map',
  'pmuName',
  'abi',
  'kind',
  'byteOrder',
  'format',
]);

/** Turn parsed JSON back into decoder-shaped values: "0x…" → bigint, hex of BYTES_KEYS → Uint8Array. */
export function revive(v: unknown, key = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => revive(x, key));
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = revive(x, k);
    return o;
  }
  if (typeof v === 'string') {
    if (BYTES_KEYS.has(key)) return fromHex(v, key);
    if (!STRING_KEYS.has(key) && /^0x[0-9a-fA-F]+$/.test(v)) return BigInt(v);
  }
  return v;
}

export function recordToJson(rec: PerfRecord, attrIndex: number | undefined): Record<string, unknown> {
  const { fileOffset: _o, ...rest } = rec as PerfRecord & { sampleId?: Record<string, unknown> };
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) {
    if (k === 'kind' || k === 'type' || k === 'misc') continue;
    o[k === 'oldBytes' && rec.kind === 'text_poke' ? 'old' : k === 'newBytes' && rec.kind === 'text_poke' ? 'new' : k] =
      v;
  }
  const head: Record<string, unknown> = { kind: rec.kind, type: rec.type, misc: rec.misc };
  if (attrIndex !== undefined) head.attr = attrIndex;
  const sid = o.sampleId as Record<string, unknown> | undefined;
  if (sid && FLAT_SAMPLE_ID.has(rec.kind)) {
    delete o.sampleId;
    Object.assign(o, sid);
  }
  return toJsonValue({ ...head, ...o }) as Record<string, unknown>;
}

const TYPE_OF_KIND = new Map<string, number>(Object.entries(RecordType).map(([k, v]) => [k.toLowerCase(), v]));

/** The inverse of recordToJson (also accepts hand-written lines: type, misc and lengths are filled in). */
export function recordFromJson(j: Record<string, unknown>, line = 0): { rec: PerfRecord; attr?: number } {
  const o = revive(j) as Record<string, unknown>;
  const kind = o.kind as string;
  if (typeof kind !== 'string') throw new Error(`line ${line}: record without "kind"`);
  const attr = typeof o.attr === 'number' ? o.attr : undefined;
  delete o.attr;
  if (kind === 'text_poke') {
    if (o.old !== undefined) o.oldBytes = o.old;
    if (o.new !== undefined) o.newBytes = o.new;
    delete o.old;
    delete o.new;
    o.oldBytes ??= new Uint8Array(0);
    o.newBytes ??= new Uint8Array(0);
    if (o.abi === 'rfc') o.len ??= (o.oldBytes as Uint8Array).length;
    o.oldLen = (o.oldBytes as Uint8Array).length;
    o.newLen = (o.newBytes as Uint8Array).length;
    o.misc ??= PERF_RECORD_MISC_KERNEL;
  }
  if (FLAT_SAMPLE_ID.has(kind)) {
    const sid: Record<string, unknown> = {};
    for (const k of SAMPLE_ID_KEYS) {
      if (o[k] !== undefined) {
        sid[k] = o[k];
        delete o[k];
      }
    }
    if (Object.keys(sid).length) o.sampleId = sid;
  }
  if (o.type === undefined) {
    const t = kind === 'text_poke' && o.abi === 'rfc' ? RFC_TEXT_POKE_TYPE : TYPE_OF_KIND.get(kind);
    if (t === undefined) throw new Error(`line ${line}: unknown record kind '${kind}' (give "type")`);
    o.type = t;
  }
  o.misc ??= 0;
  o.size ??= 0;
  o.fileOffset = 0;
  return { rec: o as unknown as PerfRecord, attr };
}

async function withOutput(out: string, fn: (s: WriteStream | NodeJS.WriteStream) => Promise<void>): Promise<void> {
  if (out === '-') return fn(process.stdout);
  const tmp = join(dirname(out), `${basename(out)}.tmp-${process.pid}`);
  const s = createWriteStream(tmp);
  try {
    await fn(s);
    await new Promise<void>((res, rej) => s.end((e?: Error | null) => (e ? rej(e) : res())));
    await rename(tmp, out);
  } catch (e) {
    s.destroy();
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

function writeLine(s: NodeJS.WritableStream, obj: unknown): Promise<void> | undefined {
  if (s.write(`${JSON.stringify(obj)}\n`)) return undefined;
  return new Promise((res) => s.once('drain', () => res()));
}

/** perf.data → JSON lines, streamed. */
export async function perfDataToJsonl(
  input: string,
  out: string,
  opts: { textPokeAbi?: 'final' | 'rfc'; progress?: (offset: number, total: number) => void } = {},
): Promise<void> {
  const { f, info, records } = await openInput(input, { textPokeAbi: opts.textPokeAbi }, () => 'expand');
  try {
    await withOutput(out, async (s) => {
      await writeLine(s, {
        kind: 'perf.data',
        format: JSONL_FORMAT,
        version: 1,
        byteOrder: info.le ? 'little' : 'big',
        pipe: info.pipe,
        attrs: info.attrs.map((a) => toJsonValue({ name: a.name, attr: a.attr, ids: a.ids })),
      });
      for (const ft of info.features) {
        const id = featureIdOf(ft);
        await writeLine(s, { kind: 'feature', id, name: featureName(id), value: toJsonValue(ft) });
      }
      const layoutIndex = attrIndexer(f);
      let n = 0;
      for await (const raw of records) {
        if (++n % 4096 === 0) opts.progress?.(raw.fileOffset, info.size);
        // in the first lines already
        if (raw.type === RecordType.HEADER_ATTR || raw.type === RecordType.HEADER_FEATURE) continue;
        const rec = raw.decode();
        const p = writeLine(s, recordToJson(rec, layoutIndex(raw.layout)));
        if (p) await p;
      }
    });
  } finally {
    await f.close();
  }
}

/** An attr from JSON: missing fields 0; u64 fields may be "0x…", decimal strings or safe numbers. */
export function attrFromJson(j: Partial<Record<keyof EventAttr, unknown>>, what: string): EventAttr {
  const a = emptyAttr() as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(j ?? {})) {
    if (!(k in a)) throw new Error(`${what}: unknown attr field '${k}'`);
    a[k] = typeof a[k] === 'bigint' ? u64FromJson(toJsonValue(v), `${what}.${k}`) : Number(v);
  }
  return a as unknown as EventAttr;
}

/** JSON lines → perf.data (file mode, or pipe mode with out '-'). */
export async function jsonlToPerfData(input: string, out: string, opts: { bigEndian?: boolean } = {}): Promise<void> {
  const rl = createInterface({ input: createReadStream(input), crlfDelay: Infinity });
  let head: { attrs: WriterAttr[] } | undefined;
  const features: FeatureData[] = [];
  let writer: PerfDataWriter | undefined;
  let n = 0;
  const start = async () => {
    if (!head) throw new Error(`${input}: the first line must describe the file ({"kind":"perf.data",…})`);
    writer ??= await PerfDataWriter.create(out, head.attrs, { bigEndian: opts.bigEndian, features });
    return writer;
  };
  try {
    for await (const line of rl) {
      n++;
      if (!line.trim()) continue;
      let j: Record<string, unknown>;
      try {
        j = JSON.parse(line) as Record<string, unknown>;
      } catch (e) {
        throw new Error(`${input}:${n}: not JSON: ${(e as Error).message}`);
      }
      if (j.kind === 'perf.data') {
        const attrs = ((j.attrs ?? []) as unknown[]).map(
          (a) => revive(a) as { name?: string; attr: Partial<EventAttr>; ids?: bigint[] },
        );
        head = {
          attrs: attrs.map((a, i) => ({
            name: a.name,
            attr: attrFromJson(a.attr, `${input}:${n}: attrs[${i}]`),
            ids: (a.ids ?? []).map((x, k) => u64FromJson(toJsonValue(x), `${input}:${n}: attrs[${i}].ids[${k}]`)),
          })),
        };
      } else if (j.kind === 'feature') {
        const v = j.value as Record<string, unknown>;
        const isText = typeof v?.value === 'string';
        const f = revive(v) as FeatureData & { value?: unknown };
        if (isText) f.value = v.value; // hostname etc. stay text even when they look like hex
        if (writer) writer.setFeature(f);
        else features.push(f);
      } else {
        const w = await start();
        const { rec, attr } = recordFromJson(j, n);
        await w.write(rec, attr);
      }
    }
    await (await start()).finish();
  } catch (e) {
    await writer?.abort();
    throw e;
  }
}
