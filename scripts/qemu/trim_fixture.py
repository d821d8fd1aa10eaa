#!/usr/bin/env python3
"""Trim a qemu harness recording into the committed real-kernel fixture.

usage: trim_fixture.py RAW_DIR FIXTURE_DIR

RAW_DIR is what scripts/qemu/guest-run.sh left in the host's output
directory: perf-kcore/ (perf 6.1's `record --kcore`), optionally
perfpoke-kcore/ (perfpoke's recording of the same run) and kcore_after/
(kernel text copied again after both stopped).

The raw kcore copies hold all kernel text (~14 MB each) and kallsyms ~4 MB,
too big to commit, and perf cannot read them compressed. So every kcore is
rewritten as an ELF core with only the pages that matter:

  * for each poked site in the kernel image, the whole function around it
    (from its kallsyms symbol to the next symbol), so that perf and perfpoke
    can still name the site -- perf drops a symbol whose start is not
    inside a kcore segment;
  * the same for sites in the module area: trampolines there have no
    kallsyms symbol of their own, and perf names them after the nearest
    symbol below (`__this_module+0x4cc0`), so that symbol's pages are kept
    too, to reproduce perf's naming; beyond 64 KB only the touched pages;
  * the page of `_stext`, which perf uses to pick its kernel map.

kallsyms keeps every symbol inside the kept pages, the first symbol after
each kept range (so the last function's end stays right) and the section
markers perf and perfpoke look up (`_text`, `_stext`, `_etext`, ...).
`modules` is kept whole (perf validates module addresses against it).

The script also replays the pokes itself (Python, independent of perfpoke)
over the start kcore and compares the result with kcore_after, and writes
what it found to FIXTURE_DIR/summary.json (env SUMMARY: another name);
make-fixture.sh prints it. perfpoke-two/ (phase C, MODE=two-consumer) is
trimmed the same way, against kcore_after_two/.
Standard library only.
"""
import json
import os
import shutil
import struct
import sys

PAGE = 4096
TEXT_POKE = 20
KSYMBOL = 17
MAX_FUNC = 64 * 1024          # beyond this, keep pages around the site only
ESSENTIAL = {'_text', '_stext', '_etext', '_sinittext', '_einittext', '_end',
             '_edata', '__start_rodata', 'startup_64', '_sdata'}

SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_CPU, SAMPLE_STREAM_ID, SAMPLE_IDENTIFIER = (
    1 << 1, 1 << 2, 1 << 6, 1 << 7, 1 << 9, 1 << 16)


# ---------------------------------------------------------------- perf.data
def read_perf_data(path):
    """TEXT_POKE and KSYMBOL records of a (little-endian, file-mode) perf.data,
    with their timestamps, in file order."""
    with open(path, 'rb') as f:
        buf = f.read()
    if buf[:8] != b'PERFILE2':
        raise SystemExit(f'{path}: not a little-endian perf.data file')
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<QQQQ', buf, 24)
    # id -> (sample_type, sample_id_all) from the attrs section
    by_id = {}
    event_of = {}          # id -> attr index: which event delivered a record
    first = None
    for k, a in enumerate(range(attrs_off, attrs_off + attrs_size, attr_size)):
        sample_type, = struct.unpack_from('<Q', buf, a + 24)
        flags, = struct.unpack_from('<Q', buf, a + 40)
        sid_all = bool(flags & (1 << 18))
        ids_off, ids_size = struct.unpack_from('<QQ', buf, a + attr_size - 16)
        for i in range(ids_off, ids_off + ids_size, 8):
            by_id[struct.unpack_from('<Q', buf, i)[0]] = (sample_type, sid_all)
            event_of[struct.unpack_from('<Q', buf, i)[0]] = k
        if first is None:
            first = (sample_type, sid_all)

    def id_size(attr):
        sample_type, sid_all = attr
        if not sid_all:
            return 0
        return sum(8 for bit in (SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_STREAM_ID, SAMPLE_CPU,
                                 SAMPLE_IDENTIFIER) if sample_type & bit)

    def time_at(sid_start, attr):
        sample_type, sid_all = attr
        if not sid_all or not sample_type & SAMPLE_TIME:
            return None
        return struct.unpack_from('<Q', buf, sid_start + (8 if sample_type & SAMPLE_TID else 0))[0]

    out = []
    pos, end = data_off, data_off + data_size
    while pos + 8 <= end:
        rtype, misc, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            raise SystemExit(f'{path}: record size {size} at {pos:#x}')
        rec_end = pos + size
        if rtype in (TEXT_POKE, KSYMBOL):
            # Both bodies say how long they are, so the sample_id can be
            # found right after the body. Linux 6.1 makes some records
            # longer than body + sample_id when several events consume
            # them (see docs/real-kernel.md); their sample_id is then at
            # the body's end, not at the record's end where perf looks.
            if rtype == TEXT_POKE:
                addr, old_len, new_len = struct.unpack_from('<QHH', buf, pos + 8)
                body_end = pos + (20 + old_len + new_len + 7) // 8 * 8
            else:
                addr, length, ktype, kflags = struct.unpack_from('<QIHH', buf, pos + 8)
                name_end = buf.index(b'\0', pos + 24, rec_end)
                body_end = pos + (name_end + 1 - pos + 7) // 8 * 8
            attr = first
            size_id = id_size(first) if first else 0
            event = None
            if first and first[0] & SAMPLE_IDENTIFIER and size_id:
                rid = struct.unpack_from('<Q', buf, body_end + size_id - 8)[0]
                attr = by_id.get(rid, first)
                event = event_of.get(rid)
            inflated = rec_end - body_end - size_id
            t = time_at(body_end, attr)
            if rtype == TEXT_POKE:
                b = buf[pos + 20:pos + 20 + old_len + new_len]
                out.append({'kind': 'poke', 'time': t, 'addr': addr, 'old': b[:old_len],
                            'new': b[old_len:], 'offset': pos, 'inflated': inflated, 'event': event})
            else:
                name = buf[pos + 24:name_end].decode('utf-8', 'replace')
                out.append({'kind': 'ksymbol', 'time': t, 'addr': addr, 'len': length,
                            'ktype': ktype, 'unregister': bool(kflags & 1), 'name': name,
                            'inflated': inflated})
        pos = rec_end
    return out


# ---------------------------------------------------------------- kcore (ELF)
def read_kcore(path):
    with open(path, 'rb') as f:
        buf = f.read()
    if buf[:4] != b'\x7fELF' or buf[4] != 2 or buf[5] != 1:
        raise SystemExit(f'{path}: not a little-endian ELF64 file')
    phoff, = struct.unpack_from('<Q', buf, 32)
    phentsize, phnum = struct.unpack_from('<HH', buf, 54)
    segs = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align = struct.unpack_from(
            '<IIQQQQQQ', buf, phoff + i * phentsize)
        segs.append(dict(type=p_type, flags=p_flags, offset=p_offset, vaddr=p_vaddr,
                         paddr=p_paddr, filesz=p_filesz, memsz=p_memsz, align=p_align))
    return buf, segs


def kcore_bytes(kc, addr, n):
    buf, segs = kc
    for s in segs:
        if s['type'] == 1 and s['vaddr'] <= addr and addr + n <= s['vaddr'] + s['filesz']:
            o = s['offset'] + addr - s['vaddr']
            return bytearray(buf[o:o + n])
    return None


def write_kcore(kc, ranges, path, stext=None):
    """An ELF core with one PT_LOAD per kept range (intersected with the
    original PT_LOADs), data page-aligned like perf's own kcore copy."""
    buf, segs = kc
    pieces = []
    for s in segs:
        if s['type'] != 1:
            continue
        lo, hi = s['vaddr'], s['vaddr'] + s['filesz']
        for a, b in ranges:
            x, y = max(a, lo), min(b, hi)
            if x < y:
                pieces.append((s, x, y))
    # perf (dso__load_kcore) walks the PT_LOADs in reverse and shrinks its
    # kernel map to the one holding _stext only when it gets there; a kept
    # piece merged before that lies inside the old, still whole kernel map
    # and is dropped. So the _stext piece (the lowest kernel address) goes
    # last, and is met first.
    pieces.sort(key=lambda p: p[1])
    if stext is not None:
        first = [p for p in pieces if p[1] <= stext < p[2]]
        pieces = [p for p in pieces if p not in first] + first
    ehdr = bytearray(buf[:64])
    phoff = 64
    struct.pack_into('<Q', ehdr, 32, phoff)
    struct.pack_into('<Q', ehdr, 40, 0)              # no section headers
    struct.pack_into('<HHHH', ehdr, 54, 56, len(pieces), 0, 0)
    data_start = (phoff + 56 * len(pieces) + PAGE - 1) // PAGE * PAGE
    phdrs = bytearray()
    body = bytearray()
    off = data_start
    for s, x, y in pieces:
        phdrs += struct.pack('<IIQQQQQQ', 1, s['flags'], off, x, 0, y - x, y - x, s['align'])
        so = s['offset'] + x - s['vaddr']
        body += buf[so:so + (y - x)]
        off += y - x
    out = bytes(ehdr) + bytes(phdrs)
    out += b'\0' * (data_start - len(out)) + bytes(body)
    write_file(path, out)
    return pieces


# ---------------------------------------------------------------- kallsyms
def read_kallsyms(path):
    syms = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            syms.append((int(parts[0], 16), parts[2], parts[1], line))
    return syms


def containing_function(syms_sorted, addr):
    """(start, end) of the kallsyms symbol holding addr, end = next higher
    address, or None."""
    import bisect
    addrs = [s[0] for s in syms_sorted]
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0:
        return None
    start = addrs[i]
    j = i + 1
    while j < len(addrs) and addrs[j] == start:
        j += 1
    end = addrs[j] if j < len(addrs) else start + PAGE
    return start, end


def merge(ranges):
    out = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def page_range(a, b):
    return a // PAGE * PAGE, (b + PAGE - 1) // PAGE * PAGE


def trim_kallsyms(src, dst, ranges):
    import bisect
    syms = read_kallsyms(src)
    syms_sorted = sorted(syms, key=lambda s: s[0])
    addrs = [s[0] for s in syms_sorted]
    keep = set()
    for a, b in ranges:
        i = bisect.bisect_left(addrs, a)
        while i < len(addrs) and addrs[i] < b:
            keep.add(addrs[i])
            i += 1
        if i < len(addrs):
            keep.add(addrs[i])  # the first symbol after the range bounds the last one
    lines = [s[3] for s in syms if s[0] in keep or s[1] in ESSENTIAL]
    write_file(dst, ''.join(lines).encode())
    return len(lines)


def write_file(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)


# ---------------------------------------------------------------- replay
COPY_WINDOW_NS = 10_000_000


def fold_copies(pokes):
    """Linux 6.1 writes each poke once per text_poke event (perfpoke-two/):
    keep the first copy of each -- same address and bytes, another event,
    within COPY_WINDOW_NS -- as perfpoke's src/machine/double-delivery.ts
    does. Returns (pokes kept, copies folded)."""
    events = {p['event'] for p in pokes if p['event'] is not None}
    if len(events) < 2:
        return pokes, 0
    kept, waiting, folded = [], [], 0
    for p in sorted(pokes, key=lambda p: (p['time'] or 0, p['offset'])):
        t = p['time'] or 0
        waiting = [w for w in waiting if t - (w[0]['time'] or 0) <= COPY_WINDOW_NS and len(w[1]) < len(events)]
        for lead, seen in waiting:
            if p['event'] is not None and p['event'] not in seen and \
                    (lead['addr'], lead['old'], lead['new']) == (p['addr'], p['old'], p['new']):
                seen.add(p['event'])
                folded += 1
                break
        else:
            kept.append(p)
            if p['event'] is not None:
                waiting.append((p, {p['event']}))
    return kept, folded


def replay(pokes, start_kc, after_kc):
    """Apply pokes in time order over the start kcore; count pokes whose old
    bytes disagree with the image, and bytes that differ from kcore_after at
    the end (skipping bytes of removed trampolines, which are dead)."""
    image = {}
    dead = set()
    old_mismatch = []
    outside = 0
    for p in sorted(pokes, key=lambda p: (p['time'] or 0)):
        a, old, new = p['addr'], p['old'], p['new']
        if old:
            base = kcore_bytes(start_kc, a, len(old))
            if base is None and not all((a + i) in image for i in range(len(old))):
                outside += 1
            else:
                cur = bytes(image.get(a + i, base[i] if base else 0) for i in range(len(old)))
                if cur != bytes(old):
                    old_mismatch.append(a)
        if old and not new:
            dead.update(range(a, a + len(old)))
        for i, v in enumerate(new):
            image[a + i] = v
            dead.discard(a + i)
    bytes_checked = 0
    differ = []
    for addr, v in sorted(image.items()):
        if addr in dead:
            continue
        after = kcore_bytes(after_kc, addr, 1)
        if after is None:
            continue
        bytes_checked += 1
        if after[0] != v:
            differ.append(addr)
    return dict(pokes=len(pokes), sites=len({p['addr'] for p in pokes}),
                old_bytes_mismatch=[hex(a) for a in old_mismatch], outside_kcore=outside,
                bytes_checked_against_kcore_after=bytes_checked,
                bytes_differing_from_kcore_after=[hex(a) for a in differ])


def data_path(d):
    return os.path.join(d, 'data') if os.path.isdir(d) else d


# recording dir -> the kcore_after copy taken when its phase was over
RECORDINGS = (('perf-alone', 'kcore_after_alone'), ('perf-kcore', 'kcore_after'),
              ('perfpoke-kcore', 'kcore_after'), ('perfpoke-two', 'kcore_after_two'))


def copy_kcore_dir(src, dst, ranges, stext):
    write_kcore(read_kcore(os.path.join(src, 'kcore')), ranges, os.path.join(dst, 'kcore'), stext)
    n = trim_kallsyms(os.path.join(src, 'kallsyms'), os.path.join(dst, 'kallsyms'), ranges)
    with open(os.path.join(src, 'modules'), 'rb') as f:
        write_file(os.path.join(dst, 'modules'), f.read())
    return n


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    raw, fix = sys.argv[1], sys.argv[2]
    present = [(name, after) for name, after in RECORDINGS
               if os.path.exists(data_path(os.path.join(raw, name)))]
    if not present:
        raise SystemExit(f'{raw}: no recording ({", ".join(n for n, _ in RECORDINGS)})')
    recs = {name: read_perf_data(data_path(os.path.join(raw, name))) for name, _ in present}
    pokes = {name: [r for r in rs if r['kind'] == 'poke'] for name, rs in recs.items()}

    first = present[0][0]
    syms_sorted = sorted(read_kallsyms(os.path.join(raw, first, 'kcore_dir', 'kallsyms')), key=lambda s: s[0])
    wanted = []
    for p in (p for ps in pokes.values() for p in ps):
        n = max(len(p['old']), len(p['new']), 1)
        a = p['addr']
        fn = containing_function(syms_sorted, a)
        if fn and fn[0] <= a and a + n - fn[0] <= MAX_FUNC:
            # the symbol perf will name the site after, through the site
            wanted.append(page_range(fn[0], max(a + n, min(fn[1], fn[0] + MAX_FUNC))))
        else:
            wanted.append(page_range(a, a + n))
    stext = None
    for s in syms_sorted:
        if s[1] in ('_stext', '_text'):
            wanted.append(page_range(s[0], s[0] + 1))
            if s[1] == '_stext':
                stext = s[0]
    ranges = merge(wanted)

    # Replace only what this run brings (README.md and other phases' recordings stay).
    for name in [n for n, _ in present] + [a for _, a in present]:
        if os.path.exists(os.path.join(fix, name)):
            shutil.rmtree(os.path.join(fix, name))
    summary = {'ranges': [[hex(a), hex(b)] for a, b in ranges],
               'kept_bytes': sum(b - a for a, b in ranges), 'recordings': {}}
    afters = {}
    for name, after in present:
        src = os.path.join(raw, name)
        with open(data_path(src), 'rb') as f:
            write_file(os.path.join(fix, name, 'data'), f.read())
        entry = {'pokes': len(pokes[name]),
                 'ksymbols': sum(1 for r in recs[name] if r['kind'] == 'ksymbol'),
                 'inflated_records': sum(1 for r in recs[name] if r['inflated'] > 0)}
        kd = os.path.join(src, 'kcore_dir')
        if os.path.isdir(kd) and os.path.isdir(os.path.join(raw, after)):
            entry['kallsyms_lines'] = copy_kcore_dir(kd, os.path.join(fix, name, 'kcore_dir'), ranges, stext)
            if after not in afters:
                copy_kcore_dir(os.path.join(raw, after), os.path.join(fix, after), ranges, stext)
                afters[after] = read_kcore(os.path.join(raw, after, 'kcore'))
            once, folded = fold_copies(pokes[name])
            entry['copies_folded'] = folded
            entry['replay'] = replay(once, read_kcore(os.path.join(kd, 'kcore')), afters[after])
            entry['replay']['against'] = after
        summary['recordings'][name] = entry
    if 'perf-kcore' in pokes and 'perfpoke-kcore' in pokes:
        key = lambda p: (p['addr'], bytes(p['old']), bytes(p['new']))
        a, b = sorted(map(key, pokes['perf-kcore'])), sorted(map(key, pokes['perfpoke-kcore']))
        summary['phase_b_same_pokes'] = a == b
        summary['phase_b_only_in_perf'] = len(a) - len(b) if set(b) <= set(a) else None
    summary['ksymbols'] = {name: [dict(addr=hex(r['addr']), len=r['len'], type=r['ktype'], name=r['name'],
                                       unregister=r['unregister']) for r in rs if r['kind'] == 'ksymbol']
                           for name, rs in recs.items()}
    total = 0
    for dp, _, fs in os.walk(fix):
        total += sum(os.path.getsize(os.path.join(dp, f)) for f in fs)
    summary['fixture_bytes'] = total
    write_file(os.path.join(fix, os.environ.get('SUMMARY', 'summary.json')),
               (json.dumps(summary, indent=1) + '\n').encode())
    short = {k: v for k, v in summary.items() if k not in ('ranges', 'ksymbols')}
    for e in short['recordings'].values():
        r = e.get('replay')
        if r:
            for k in ('old_bytes_mismatch', 'bytes_differing_from_kcore_after'):
                r[k] = len(r[k])
    print(json.dumps(short, indent=1))


if __name__ == '__main__':
    main()
