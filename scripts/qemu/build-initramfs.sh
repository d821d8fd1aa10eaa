#!/bin/bash
# Builds the guest's initramfs: static busybox, the host's perf 6.1 and node
# (each with the shared libraries ldd lists, at the same paths), and the
# virtio/9p modules of the guest kernel, decompressed so busybox insmod can
# load them. The guest's /init mounts the project over 9p and runs
# scripts/qemu/guest-run.sh from there, so editing the workload needs no rebuild.
#
# usage: build-initramfs.sh OUT.cpio.gz [KVER]
set -euo pipefail
out=${1:?usage: build-initramfs.sh OUT.cpio.gz [KVER]}
kver=${2:-$(ls /boot/vmlinuz-6.1.0-*-amd64 | sed 's|.*/vmlinuz-||' | sort -V | tail -1)}
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d /tmp/perfpoke-initramfs.XXXXXX)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,proj,out,mods,etc,root}
cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

# A binary and its libraries, at the paths the dynamic loader expects.
copy_with_libs() {
  local bin=$1 dest=${2:-$1}
  mkdir -p "$root$(dirname "$dest")"
  cp -L "$bin" "$root$dest"
  ldd "$bin" | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' | while read -r lib; do
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

# Debian's /usr/bin/perf may be a wrapper script that execs perf_<version>.
perf=/usr/bin/perf
if ! head -c 4 "$perf" | grep -q ELF; then
  perf=$(ls /usr/bin/perf_6.1* 2>/dev/null | head -1)
fi
copy_with_libs "$perf" /usr/bin/perf
copy_with_libs "$(readlink -f "$(command -v node)")" /usr/bin/node

# 9p over virtio-pci, in load order.
: > "$root/mods/order"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p; do
  f=$(find "/lib/modules/$kver" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -1)
  if [ -z "$f" ]; then
    # built into this kernel (no module file): nothing to load
    grep -q "/$m.ko" "/lib/modules/$kver/modules.builtin" 2>/dev/null && continue
    echo "build-initramfs: module $m not found for $kver" >&2; exit 1
  fi
  case "$f" in
    *.xz) xz -dc "$f" > "$root/mods/$m.ko" ;;
    *.zst) zstd -qdc "$f" > "$root/mods/$m.ko" ;;
    *) cp "$f" "$root/mods/$m.ko" ;;
  esac
  echo "$m" >> "$root/mods/order"
done

# The BPF fentry helper of guest-workload.sh (static, no libbpf needed).
if command -v gcc >/dev/null; then
  gcc -O2 -static -Wall -o "$root/usr/bin/bpf-fentry" "$here/bpf-fentry.c"
else
  echo "build-initramfs: no gcc; the workload will skip its BPF trampoline step" >&2
fi

echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"
cp "$here/guest-init.sh" "$root/init"
chmod +x "$root/init"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
ls -la "$out"
