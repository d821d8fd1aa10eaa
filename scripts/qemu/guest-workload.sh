#!/bin/sh
# The guest workload: makes the kernel rewrite its own text in as many real
# ways as this kernel allows, each change undone again, so the recording holds
# pokes of both directions. Every step logs what it did; a step the kernel
# refuses is reported and skipped.
T=/sys/kernel/tracing
log() { echo "workload: $(date +%T) $*" > /dev/console; }
settle() { sleep "${1:-0.5}"; }

# 1. A tracepoint enabled and disabled: the jump labels at its call sites
#    (__tracepoint_kmalloc's static key) flip between nop and jmp.
if [ -e $T/events/kmem/kmalloc/enable ]; then
  echo 1 > $T/events/kmem/kmalloc/enable && log "tracepoint kmem:kmalloc on"
  settle
  echo 0 > $T/events/kmem/kmalloc/enable && log "tracepoint kmem:kmalloc off"
  settle
fi

# 2. A static key flipped through a sysctl (the seed's example).
if [ -e /proc/sys/kernel/sched_schedstats ]; then
  echo 1 > /proc/sys/kernel/sched_schedstats && log "sched_schedstats on"
  settle
  echo 0 > /proc/sys/kernel/sched_schedstats && log "sched_schedstats off"
  settle
fi

# 3. The function tracer on one function: schedule's fentry nop becomes a
#    call (to ftrace_caller or a per-ops trampoline) and back.
if [ -e $T/set_ftrace_filter ]; then
  echo schedule > $T/set_ftrace_filter
  echo function > $T/current_tracer && log "function tracer on schedule"
  settle 1
  echo nop > $T/current_tracer && log "function tracer off"
  echo > $T/set_ftrace_filter
  settle 1
fi

# 4. kprobes. At a function's entry x86 puts the kprobe on ftrace (fentry
#    nop -> call to a kprobe ftrace_ops trampoline); inside the body it is an
#    INT3, which the optimizer later turns into a jmp to an optprobe
#    trampoline. The first offset that is an instruction boundary wins.
if [ -e $T/kprobe_events ]; then
  echo 'p:ppentry do_sys_openat2' >> $T/kprobe_events && echo 1 > $T/events/kprobes/ppentry/enable \
    && log "kprobe at do_sys_openat2 entry"
  for off in 9 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 5 4 8 10 11 12; do
    if echo "p:ppbody do_sys_openat2+$off" >> $T/kprobe_events 2>/dev/null; then
      echo 1 > $T/events/kprobes/ppbody/enable && log "kprobe at do_sys_openat2+$off"
      break
    fi
  done
  cat /proc/version > /dev/null
  settle 2          # let the kprobe optimizer run (it waits a few jiffies)
  cat /proc/version > /dev/null
  [ -e $T/events/kprobes/ppbody/enable ] && echo 0 > $T/events/kprobes/ppbody/enable
  [ -e $T/events/kprobes/ppentry/enable ] && echo 0 > $T/events/kprobes/ppentry/enable
  echo > $T/kprobe_events && log "kprobes removed"
  settle 2
fi

# 5. A BPF trampoline: an fentry program attached and detached (needs the
#    helper built by build-initramfs.sh; skipped when it is absent).
if [ -x /usr/bin/bpf-fentry ]; then
  /usr/bin/bpf-fentry do_sys_openat2 1 && log "bpf fentry attached and detached"
  settle 2
fi
log "done"
