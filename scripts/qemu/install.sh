#!/bin/bash
# Installs what the qemu harness needs on a Debian 12 host: qemu (TCG is
# enough), a static busybox for the guest userland, and a stock Debian 6.1
# kernel — Debian's 6.1 emits PERF_RECORD_TEXT_POKE, unlike kernels that
# withhold it. The kernel package also brings the 9p/virtio modules the guest
# loads to see the host's project directory.
set -euo pipefail
if [ -z "${KVER:-}" ]; then
  pkg=$(apt-cache search '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' | awk '{print $1}' | sort -V | tail -1)
else
  pkg="linux-image-${KVER}-unsigned"
fi
[ -n "$pkg" ] || { echo "install.sh: no linux-image-6.1.0-*-amd64-unsigned in apt" >&2; exit 1; }
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -x /bin/busybox ] || need+=(busybox-static)
ls /boot/vmlinuz-6.1.0-*-amd64 >/dev/null 2>&1 || need+=("$pkg")
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi
ls /boot/vmlinuz-6.1.0-*-amd64
