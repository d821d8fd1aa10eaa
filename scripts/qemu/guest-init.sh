#!/bin/sh
# /init of the qemu guest (copied into the initramfs by build-initramfs.sh).
# Mounts the usual pseudo file systems, loads the 9p modules, mounts the
# project (tag "proj") and the output directory (tag "out"), then runs the
# project's scripts/qemu/guest-run.sh and powers off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
for m in $(cat /mods/order); do
  insmod "/mods/$m.ko" || echo "init: insmod $m failed"
done
opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $opts proj /proj || echo "init: mount proj failed"
mount -t 9p -o $opts out /out || echo "init: mount out failed"
echo "init: kernel $(uname -r), running /proj/scripts/qemu/guest-run.sh"
if [ -f /proj/scripts/qemu/guest-run.sh ]; then
  sh /proj/scripts/qemu/guest-run.sh
  echo "init: guest-run.sh exit $?"
else
  echo "init: no guest-run.sh"
fi
sync
poweroff -f
