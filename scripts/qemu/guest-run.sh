#!/bin/sh
# Runs inside the qemu guest (started by /init, see guest-init.sh).
# Records the workload's kernel text pokes twice at the same time, with
# system-wide sessions in the same guest run:
#   perf-kcore/     perf 6.1:  perf record --kcore -a -e dummy   (background)
#   perfpoke-kcore/ perfpoke:  perfpoke record -a --kcore -- guest-workload.sh
# then copies kernel text once more after both stop (kcore_after/, taken by
# `perf record --kcore` of `true`, of which only kcore_dir is kept), so a
# test can compare "kcore at start + every poke" with the real end state.
# Results go to /out (the host's output directory, over 9p).
#
# /out/config (written by the host, optional) may set PERFPOKE=0 to skip
# perfpoke's recording (perf's alone is then made).
W=/tmp/rec
mkdir -p $W
[ -f /out/config ] && . /out/config
cd /proj || exit 1
log() { echo "guest-run: $(date +%T) $*"; }

log "perf: $(perf --version)  node: $(node --version)"
ls -la /proc/kcore >/dev/null 2>&1 || { log "no /proc/kcore"; exit 1; }
sysctl -w kernel.kptr_restrict=0 >/dev/null 2>&1
sysctl -w kernel.perf_event_paranoid=-1 >/dev/null 2>&1

have_perfpoke=0
if [ "${PERFPOKE:-1}" = 1 ] && [ -f src/cli/commands/record.ts ] && ls build/Release/*.node >/dev/null 2>&1; then
  have_perfpoke=1
fi

# perf first, in the background; it copies kcore before it starts reading
# events, so wait until its data file has a header and give it a moment.
perf record --kcore -a -e dummy -o $W/perf-kcore > $W/perf-record.log 2>&1 &
perf_pid=$!
i=0
while [ ! -s $W/perf-kcore/data ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
sleep 1
log "perf record running (pid $perf_pid)"

if [ $have_perfpoke = 1 ]; then
  log "perfpoke record -a --kcore -o $W/perfpoke-kcore -- guest-workload.sh"
  node --import tsx src/cli/main.ts record -a --kcore -o $W/perfpoke-kcore -- \
    sh /proj/scripts/qemu/guest-workload.sh > $W/perfpoke-record.log 2>&1
  log "perfpoke record exit $?"
  cat $W/perfpoke-record.log
else
  log "perfpoke recorder not available; running the workload under perf alone"
  sh /proj/scripts/qemu/guest-workload.sh
fi

sleep 1
kill -INT $perf_pid
wait $perf_pid
log "perf record exit $?"
cat $W/perf-record.log

# Kernel text after the workload (see header comment).
perf record --kcore -a -e dummy -o $W/after -- true > $W/after.log 2>&1
mkdir -p $W/kcore_after
cp $W/after/kcore_dir/* $W/kcore_after/
rm -rf $W/after

cp /proc/kallsyms $W/kallsyms.full 2>/dev/null
uname -a > $W/uname.txt
log "copying to /out"
rm -rf /out/perf-kcore /out/perfpoke-kcore /out/kcore_after
cp -r $W/* /out/
sync
log "done"
