#!/bin/sh
# Runs inside the qemu guest (started by /init, see guest-init.sh).
# Records guest-workload.sh's kernel text pokes in two phases:
#
#  A. perf 6.1 alone:  perf record --kcore -a -e dummy -- guest-workload.sh
#       -> perf-alone/, then kcore_after_alone/
#  B. perf 6.1 and perfpoke at the same time, both system wide, so both
#     files hold the same pokes:
#       perf-kcore/      perf record --kcore -a -e dummy   (background)
#       perfpoke-kcore/  perfpoke record -a --kcore -- guest-workload.sh
#       -> then kcore_after/
#
# kcore_after*/ is kernel text copied again once a phase is over (by a
# `perf record --kcore` of `true`, of which only kcore_dir is kept), so a
# test can compare "kcore at start + every poke" with the real end state.
#
# Why phase A: with two consumers of TEXT_POKE on a CPU, Linux 6.1 writes
# the records of all but the newest consumer with a wrong size
# (perf_event_text_poke_output and perf_event_ksymbol_output add each
# consumer's sample_id size to a header shared by all of them and never
# reset it), so in phase B perf's file has records whose sample_id is not at
# the end where readers look for it. Phase A is the same workload recorded
# cleanly. See docs/real-kernel.md.
#
# Results go to /out (the host's output directory, over 9p); /out/status
# gets each recorder's exit code. /out/config (written by the host,
# optional) may set PERFPOKE=0 to skip phase B's perfpoke recording, or
# MODE=two-consumer to run only phase C (below).
W=/tmp/rec
mkdir -p $W
: > /out/status
[ -f /out/config ] && . /out/config
cd /proj || exit 1
log() { echo "guest-run: $(date +%T) $*"; }

log "perf: $(perf --version)  node: $(node --version)"
ls -la /proc/kcore >/dev/null 2>&1 || { log "no /proc/kcore"; exit 1; }
sysctl -w kernel.kptr_restrict=0 >/dev/null 2>&1
sysctl -w kernel.perf_event_paranoid=-1 >/dev/null 2>&1

# Phase C alone (MODE=two-consumer in /out/config): ONE recording in which two
# events set text_poke (scripts/qemu/two-consumer-record.ts), so Linux 6.1
# writes every poke twice into the same file, the second copy inflated.
#   -> perfpoke-two/, then kcore_after_two/
if [ "${MODE:-}" = two-consumer ]; then
  log "phase C: two-consumer-record.ts perfpoke-two -- guest-workload.sh"
  node --import tsx scripts/qemu/two-consumer-record.ts $W/perfpoke-two -- \
    sh /proj/scripts/qemu/guest-workload.sh > $W/perfpoke-two.log 2>&1
  rc=$?
  log "phase C: exit $rc"
  echo "perfpoke_two_exit=$rc" >> /out/status
  cat $W/perfpoke-two.log
  sleep 1
  perf record --kcore -a -e dummy -o $W/after -- true > $W/after.log 2>&1
  mkdir -p $W/kcore_after_two
  cp $W/after/kcore_dir/* $W/kcore_after_two/
  rm -rf $W/after
  uname -a > $W/uname.txt
  rm -rf /out/perfpoke-two /out/kcore_after_two
  cp -r $W/* /out/
  sync
  log "done"
  exit 0
fi

have_perfpoke=0
if [ "${PERFPOKE:-1}" = 1 ] && [ -f src/cli/commands/record.ts ] && ls build/Release/*.node >/dev/null 2>&1; then
  have_perfpoke=1
fi

# Phase A: perf alone.
log "phase A: perf record --kcore -a -e dummy -- guest-workload.sh"
perf record --kcore -a -e dummy -o $W/perf-alone -- sh /proj/scripts/qemu/guest-workload.sh > $W/perf-alone.log 2>&1
rc=$?
log "phase A: perf record exit $rc"
echo "perf_alone_exit=$rc" >> /out/status
sleep 1
perf record --kcore -a -e dummy -o $W/after -- true > $W/after.log 2>&1
mkdir -p $W/kcore_after_alone
cp $W/after/kcore_dir/* $W/kcore_after_alone/
rm -rf $W/after

# Phase B. perf first, in the background; it copies kcore before it starts reading
# events, so wait until its data file has a header and give it a moment.
perf record --kcore -a -e dummy -o $W/perf-kcore > $W/perf-record.log 2>&1 &
perf_pid=$!
i=0
while [ ! -s $W/perf-kcore/data ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
sleep 1
log "perf record running (pid $perf_pid)"

if [ $have_perfpoke = 1 ]; then
  log "perfpoke record -a --kcore -o $W/perfpoke-kcore -- guest-workload.sh"
  node --import tsx scripts/qemu/perfpoke-record.ts record -a --kcore -o $W/perfpoke-kcore -- \
    sh /proj/scripts/qemu/guest-workload.sh > $W/perfpoke-record.log 2>&1
  rc=$?
  log "perfpoke record exit $rc"
  echo "perfpoke_record_exit=$rc" >> /out/status
  cat $W/perfpoke-record.log
else
  log "perfpoke recorder not available; running the workload under perf alone"
  sh /proj/scripts/qemu/guest-workload.sh
fi

sleep 1
kill -INT $perf_pid
wait $perf_pid
rc=$?
log "perf record exit $rc (130 = stopped by SIGINT, as intended)"
echo "perf_record_exit=$rc" >> /out/status
cat $W/perf-record.log

# Kernel text after the workload (see header comment).
perf record --kcore -a -e dummy -o $W/after -- true > $W/after.log 2>&1
mkdir -p $W/kcore_after
cp $W/after/kcore_dir/* $W/kcore_after/
rm -rf $W/after

uname -a > $W/uname.txt
log "copying to /out"
rm -rf /out/perf-alone /out/kcore_after_alone /out/perf-kcore /out/perfpoke-kcore /out/kcore_after
cp -r $W/* /out/
sync
log "done"
