#!/bin/bash
# Boots the Debian 6.1 kernel under qemu with the harness initramfs, sharing
# the project (tag "proj") and an output directory (tag "out") over 9p. The
# guest runs scripts/qemu/guest-run.sh and powers off; its console goes to
# stdout and OUT/console.log.
#
# Single-threaded TCG on purpose: KVM is unavailable here, and multi-threaded
# TCG hangs while the kernel rewrites its own text (text_poke_bp's IPIs).
#
# usage: boot.sh INITRD OUTDIR [KVER]
set -euo pipefail
initrd=${1:?usage: boot.sh INITRD OUTDIR [KVER]}
outdir=${2:?usage: boot.sh INITRD OUTDIR [KVER]}
kver=${3:-$(ls /boot/vmlinuz-6.1.0-*-amd64 | sed 's|.*/vmlinuz-||' | sort -V | tail -1)}
proj=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$outdir"
timeout "${QEMU_TIMEOUT:-900}" qemu-system-x86_64 \
  -accel tcg,thread=single -m 2048 -smp 2 \
  -kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
  -append "console=ttyS0 nokaslr panic=-1 quiet loglevel=4" \
  -nographic -no-reboot \
  -virtfs "local,path=$proj,mount_tag=proj,security_model=none" \
  -virtfs "local,path=$(cd "$outdir" && pwd),mount_tag=out,security_model=none" \
  2>&1 | tee "$outdir/console.log"
