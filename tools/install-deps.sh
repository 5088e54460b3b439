#!/bin/bash
# Installs what vmexit's build, demo and tests need on Debian 12 (bookworm), as root.
# Quiet when everything is present already.
set -eu
pkgs=(make gcc libc6-dev clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev
      pkg-config libncurses-dev linux-perf python3 jq qemu-system-x86 busybox-static cpio
      xz-utils kmod libclang-rt-14-dev tmux util-linux zstd
      bochs bochsbios vgabios bochs-term isolinux syslinux-common xorriso
      libmicrohttpd-dev prometheus python3-prometheus-client curl)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
