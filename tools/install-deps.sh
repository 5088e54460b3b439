#!/bin/bash
# Installs what vmexit's build, demo and tests need on Debian 12 (bookworm), as root.
# Quiet when everything is present already.
set -eu
pkgs=(make gcc libc6-dev clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev
      pkg-config libncurses-dev linux-perf python3 jq qemu-system-x86 busybox-static cpio
      xz-utils kmod libclang-rt-14-dev tmux util-linux zstd
      bochs bochsbios vgabios bochs-term isolinux syslinux-common xorriso procps
      # bench/bed_overhead.sh: the bpftrace baseline it compares vmexit with
      bpftrace
      libmicrohttpd-dev prometheus python3-prometheus-client curl
      # report -i trace.dat (libtracecmd and what its pkg-config file requires); the host test
      # captures with trace-cmd
      trace-cmd libtracecmd-dev libtracefs-dev libtraceevent-dev
      # tests/contrib: systemd-analyze verify checks the shipped unit, python3-yaml reads the
      # alert rules' tests; tests/host/test_unit_caps_host.sh: capsh
      systemd python3-yaml libcap2-bin
      # --perfetto FILE.pftrace: tests decode it with protoc against docs/perfetto-subset.proto
      protobuf-compiler
      # report --guest-trace: a test loads a real uftrace trace (uftrace dump --chrome)
      uftrace
      # make ARCH=arm64 (a static cross build) and the arm64 bed (tests/vm)
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
      # (no libmicrohttpd-dev:arm64: the static arm64 build has HTTP=0, see the Makefile)
      libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64 libncurses-dev:arm64)
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
# The :arm64 packages need the architecture in dpkg (and in apt's lists: the update below).
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
fi
apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
