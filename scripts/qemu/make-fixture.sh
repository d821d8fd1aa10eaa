#!/bin/bash
# Rebuilds test/fixtures/real-kernel/ from a fresh qemu run (npm run qemu-fixture).
#
#   1. install.sh          qemu, static busybox, Debian 6.1 kernel (apt)
#   2. build-initramfs.sh  busybox + perf 6.1 + node + 9p modules + bpf-fentry
#   3. boot.sh             qemu TCG; the guest runs guest-run.sh, which records
#                          guest-workload.sh with perf 6.1 alone (phase A), then
#                          with perf 6.1 and perfpoke at once (phase B)
#   4. trim_fixture.py     keeps only the kcore pages around the poked sites
#   5. checks that perf 6.1 prints the same pokes (same symbols, same bytes)
#      from the trimmed fixture as from the raw recording.
#
# Env: WORK (scratch dir, default /tmp/perfpoke-qemu), PERFPOKE=0 to record
# with perf alone, MODE=two-consumer for phase C only (one recording with two
# text_poke events: perfpoke-two/, kcore_after_two/, summary-two.json), QEMU_TIMEOUT (seconds, default 900), SKIP_BOOT=1 to only
# re-trim the last run in WORK/out, FIXTURE (default test/fixtures/real-kernel)
# to write the trimmed fixture elsewhere.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proj=$(cd "$here/../.." && pwd)
work=${WORK:-/tmp/perfpoke-qemu}
fix=${FIXTURE:-$proj/test/fixtures/real-kernel}
mkdir -p "$work"

if [ -z "${SKIP_BOOT:-}" ]; then
  bash "$here/install.sh"
  bash "$here/build-initramfs.sh" "$work/initramfs.cpio.gz"
  rm -rf "$work/out"
  mkdir -p "$work/out"
  [ -n "${PERFPOKE:-}" ] && echo "PERFPOKE=$PERFPOKE" > "$work/out/config"
  [ -n "${MODE:-}" ] && echo "MODE=$MODE" >> "$work/out/config"
  bash "$here/boot.sh" "$work/initramfs.cpio.gz" "$work/out" > /dev/null
fi
grep -E '^(guest-run|workload|bpf-fentry|init|two-consumer-record):' "$work/out/console.log" || true
if [ "${MODE:-}" = two-consumer ]; then
  # phase C only: one recording with two text_poke events (guest-run.sh)
  grep -q '^perfpoke_two_exit=0$' "$work/out/status" || {
    echo "make-fixture: two-consumer-record.ts failed in the guest:" >&2
    cat "$work/out/perfpoke-two.log" >&2 || true
    exit 1
  }
  SUMMARY=summary-two.json python3 "$here/trim_fixture.py" "$work/out" "$fix"
  grep -E '^(guest-run|workload|bpf-fentry|two-consumer-record):' "$work/out/console.log" \
    > "$fix/guest-log-two.txt" || true
  d=perfpoke-two
  perf script -i "$work/out/$d" --show-text-poke-events --show-bpf-events > "$work/$d.raw.txt" 2>&1
  perf script -i "$fix/$d" --show-text-poke-events --show-bpf-events > "$work/$d.trim.txt" 2>&1
  diff -q "$work/$d.raw.txt" "$work/$d.trim.txt" >/dev/null || {
    echo "make-fixture: perf prints $d differently after trimming:" >&2
    diff "$work/$d.raw.txt" "$work/$d.trim.txt" | head -20 >&2
    exit 1
  }
  n=$(grep -c PERF_RECORD_TEXT_POKE "$work/$d.trim.txt")
  echo "make-fixture: perf 6.1 prints $d identically before and after trimming ($n pokes)"
  du -sh "$fix"
  exit 0
fi
[ -s "$work/out/perf-kcore/data" ] || { echo "make-fixture: the guest left no perf-kcore/data" >&2; exit 1; }
if [ "${PERFPOKE:-1}" = 1 ] && ! grep -q '^perfpoke_record_exit=0$' "$work/out/status"; then
  echo "make-fixture: perfpoke record failed in the guest (PERFPOKE=0 records with perf alone):" >&2
  cat "$work/out/perfpoke-record.log" >&2 || true
  exit 1
fi

python3 "$here/trim_fixture.py" "$work/out" "$fix"
grep -E '^(guest-run|workload|bpf-fentry):' "$work/out/console.log" > "$fix/guest-log.txt" || true

# The trimmed kcore must not change what perf sees.
for d in perf-alone perf-kcore perfpoke-kcore; do
  [ -d "$fix/$d" ] || continue
  perf script -i "$work/out/$d" --show-text-poke-events --show-bpf-events > "$work/$d.raw.txt" 2>&1
  perf script -i "$fix/$d" --show-text-poke-events --show-bpf-events > "$work/$d.trim.txt" 2>&1
  if ! diff -q "$work/$d.raw.txt" "$work/$d.trim.txt" >/dev/null; then
    echo "make-fixture: perf prints $d differently after trimming:" >&2
    diff "$work/$d.raw.txt" "$work/$d.trim.txt" | head -20 >&2
    exit 1
  fi
  echo "make-fixture: perf 6.1 prints $d identically before and after trimming ($(grep -c PERF_RECORD_TEXT_POKE "$work/$d.trim.txt") pokes)"
done
du -sh "$fix"
