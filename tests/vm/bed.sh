#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Nested SVM test bed: boots a Debian 6.1 kernel under QEMU TCG with an emulated AMD CPU that has
# SVM + NPT, loads kvm + kvm_amd in it (so /dev/kvm exists and kvm:kvm_exit / kvm:kvm_entry fire
# for real), then runs a busybox-sh SCRIPT inside and hands its exit code back.
#
#   tests/vm/bed.sh [options] SCRIPT [FILE...]
#
# FILE is a host path copied to /<basename> in the bed (or SRC:DEST to pick the path). A dynamically
# linked FILE brings its shared libraries and the dynamic loader along, at the paths ldd reports.
# The script's stdout/stderr come out on our stdout; the bed's own messages go to stderr as "bed: ...".
#
# Exit status: the script's; 77 (with a "bed: SKIP:" line) when the bed cannot run here; 125 when
# the bed itself broke (timeout, crash, no exit marker). See tests/vm/README.md.
#
# Environment: VMEXIT_BED_CACHE (kernel cache, default /var/cache/vmexit-bed), VMEXIT_BED_KVER
# (use this kernel, e.g. 6.1.0-56-amd64, instead of the newest one apt knows), VMEXIT_BED_OFFLINE=1
# (never touch the network: use the newest cached kernel).
set -euo pipefail

PROG=bed
TIMEOUT=600
MEM=1024
SMP=2
CPU_MODEL="qemu64,+svm,+npt"
VERBOSE=0
SAVE_LOG=
GUEST_ENV=()
CACHE=${VMEXIT_BED_CACHE:-/var/cache/vmexit-bed}

say()  { echo "$PROG: $*" >&2; }
skip() { echo "$PROG: SKIP: $*" >&2; exit 77; }
die()  { echo "$PROG: error: $*" >&2; exit 125; }
trap 'echo "$PROG: error: unexpected failure (exit $?) at line $LINENO" >&2; exit 125' ERR

usage() {
	cat <<EOF
usage: $0 [--timeout S] [--mem MiB] [--smp N] [--cpu MODEL] [--env NAME=VALUE]... [--log FILE] [-v]
          SCRIPT [FILE|SRC:DEST]...
  --timeout S      kill the bed after S seconds (default $TIMEOUT)
  --mem MiB        guest memory (default $MEM)
  --smp N          guest CPUs (default $SMP)
  --cpu MODEL      QEMU CPU model (default $CPU_MODEL)
  --env NAME=VAL   export NAME=VAL to SCRIPT inside the bed (repeatable)
  --log FILE       keep the whole serial console log in FILE
  -v, --verbose    copy the whole serial console (kernel messages too) to stderr
Exit status: SCRIPT's; 77 = bed cannot run here (SKIP); 125 = the bed itself failed.
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--timeout) TIMEOUT=${2:?}; shift 2 ;;
	--mem) MEM=${2:?}; shift 2 ;;
	--smp) SMP=${2:?}; shift 2 ;;
	--cpu) CPU_MODEL=${2:?}; shift 2 ;;
	--env) GUEST_ENV+=("${2:?}"); shift 2 ;;
	--log) SAVE_LOG=${2:?}; shift 2 ;;
	-v|--verbose) VERBOSE=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
SCRIPT=$1; shift
[ -f "$SCRIPT" ] || die "script not found: $SCRIPT"
case $TIMEOUT$SMP in *[!0-9]*) die "--timeout and --smp take whole numbers" ;; esac
for e in "${GUEST_ENV[@]+"${GUEST_ENV[@]}"}"; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants NAME=VALUE, got: $e"
done

# ------------------------------------------------------------------ host prerequisites
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86; tools/install-deps.sh)"
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] || skip "busybox not installed (apt-get install busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
	skip "$BUSYBOX is dynamically linked: the bed needs busybox-static"
fi
for c in cpio xz dpkg-deb modinfo flock; do
	command -v $c >/dev/null || skip "$c not installed (tools/install-deps.sh)"
done

# ------------------------------------------------------------------ kernel (cached, never installed)
# The newest linux-image-6.1.0-N-amd64 in apt's lists (a local query; no network).
newest_in_apt() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
		awk '{print $1}' | sed 's/^linux-image-//' | sort -V | tail -n 1
}

newest_in_cache() {
	local d
	for d in "$CACHE"/6.1.0-*-amd64; do
		if [ -f "$d/.complete" ]; then basename "$d"; fi
	done | sort -V | tail -n 1
}

# Finds a module file by module name (kvm_amd == kvm-amd.ko) under $1.
find_module() {
	local tree=$1 want=${2//-/_} f b
	while IFS= read -r f; do
		b=$(basename "$f"); b=${b%%.ko*}
		[ "${b//-/_}" = "$want" ] && { echo "$f"; return 0; }
	done < <(find "$tree" -name '*.ko*')
	return 1
}

# Appends to ORDER the path (relative to $1) of module $2 after all of its dependencies.
ORDER=()
resolve_module() {
	local tree=$1 name=$2 f dep rel
	f=$(find_module "$tree" "$name") || return 1
	rel=${f#"$tree"/}
	for dep in "${ORDER[@]+"${ORDER[@]}"}"; do [ "$dep" = "$rel" ] && return 0; done
	local deps
	deps=$(modinfo -F depends "$f" 2>/dev/null) || return 1
	for dep in ${deps//,/ }; do resolve_module "$tree" "$dep" || return 1; done
	ORDER+=("$rel")
}

# Downloads linux-image-$1 and fills $CACHE/$1. Returns non-zero (with a message) on failure.
fetch_kernel() {
	local kver=$1 dst=$CACHE/$1 tmp deb m rel off
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	say "downloading linux-image-$kver (once; cached in $dst)"
	if ! (cd "$tmp" && timeout 600 apt-get download -q -o APT::Sandbox::User=root \
			"linux-image-$kver" >"$tmp/apt.log" 2>&1); then
		say "apt-get download linux-image-$kver failed: $(grep -E '^(E|Err):' "$tmp/apt.log" | head -n 2 | tr '\n' ' ')"
		rm -rf "$tmp"; return 1
	fi
	deb=$(ls "$tmp"/linux-image-"$kver"_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || { say "apt-get download produced no .deb"; rm -rf "$tmp"; return 1; }
	mkdir "$tmp/x"
	# Only what the bed needs: the kernel and the kvm modules with their dependencies.
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" --wildcards \
		'./boot/vmlinuz-*' './boot/config-*' \
		'./lib/modules/*/kernel/arch/x86/kvm/*' './lib/modules/*/kernel/virt/*' \
		'./lib/modules/*/kernel/drivers/crypto/ccp/*' ||
		{ say "cannot unpack $deb"; rm -rf "$tmp"; return 1; }
	local tree=$tmp/x/lib/modules/$kver/kernel
	ORDER=()
	if ! resolve_module "$tree" kvm_amd; then
		# A dependency outside the usual places: unpack every module and try again.
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" './lib/modules' ||
			{ say "cannot unpack $deb"; rm -rf "$tmp"; return 1; }
		ORDER=()
		resolve_module "$tree" kvm_amd || { say "kvm_amd or a dependency missing in $deb"; rm -rf "$tmp"; return 1; }
	fi
	rm -rf "$dst"; mkdir -p "$dst/modules"
	mv "$deb" "$dst/"
	cp "$tmp/x/boot/vmlinuz-$kver" "$dst/vmlinuz"
	cp "$tmp/x/boot/config-$kver" "$dst/config"
	: >"$dst/modules.order"
	for rel in "${ORDER[@]}"; do
		m=$(basename "$rel")
		case $m in
		*.ko.xz) xz -dc "$tree/$rel" >"$dst/modules/${m%.xz}"; m=${m%.xz} ;;
		*.ko) cp "$tree/$rel" "$dst/modules/$m" ;;
		*) say "unsupported module compression: $rel"; rm -rf "$tmp" "$dst"; return 1 ;;
		esac
		echo "$m" >>"$dst/modules.order"
	done
	# vmlinux (ELF with .BTF, e.g. for bpftool) from the xz payload of the bzImage.
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$dst/vmlinuz" | head -n 1 | cut -d: -f1)
	if [ -n "$off" ]; then
		tail -c +$((off + 1)) "$dst/vmlinuz" | xz -dc 2>/dev/null >"$dst/vmlinux" || true
	fi
	if [ "$(head -c 4 "$dst/vmlinux" 2>/dev/null | od -An -tx1 | tr -d ' ')" != 7f454c46 ]; then
		say "warning: could not extract vmlinux from vmlinuz (not needed to boot)"
		rm -f "$dst/vmlinux"
	fi
	rm -rf "$tmp"
	touch "$dst/.complete"
}

get_kernel() {
	mkdir -p "$CACHE" 2>/dev/null || skip "cannot create kernel cache $CACHE (set VMEXIT_BED_CACHE)"
	exec 9>"$CACHE/.lock"
	flock 9
	local want=${VMEXIT_BED_KVER:-}
	if [ -z "$want" ] && [ "${VMEXIT_BED_OFFLINE:-0}" != 1 ]; then
		want=$(newest_in_apt)
		if [ -z "$want" ]; then
			say "no linux-image-6.1.0-*-amd64 in apt's lists; running apt-get update"
			timeout 300 apt-get update -q >/dev/null 2>&1 || true
			want=$(newest_in_apt)
		fi
	fi
	if [ -n "$want" ] && [ -f "$CACHE/$want/.complete" ]; then
		KVER=$want
	elif [ -n "$want" ] && [ "${VMEXIT_BED_OFFLINE:-0}" != 1 ] && fetch_kernel "$want"; then
		KVER=$want
	else
		KVER=$(newest_in_cache)
		[ -n "$KVER" ] || skip "no kernel: cannot download linux-image-${want:-6.1.0-*-amd64} (no network or apt source?) and nothing cached in $CACHE"
		[ -n "$want" ] && [ "$want" != "$KVER" ] && say "warning: using cached $KVER, linux-image-$want unavailable"
	fi
	exec 9>&-
	KDIR=$CACHE/$KVER
}
get_kernel

# ------------------------------------------------------------------ initramfs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vmexit-bed.XXXXXX")
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
ROOT=$WORK/root
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,root,etc,lib/modules}
cp "$BUSYBOX" "$ROOT/bin/busybox"
echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOT/etc/passwd"
echo 'root:x:0:' >"$ROOT/etc/group"
MODS=()
while IFS= read -r m; do
	cp "$KDIR/modules/$m" "$ROOT/lib/modules/"
	MODS+=("$m")
done <"$KDIR/modules.order"

declare -A COPIED=()
copy_in() {		# copy_in SRC DEST (DEST absolute in the bed)
	local src=$1 dest=$2
	[ -n "${COPIED[$dest]+x}" ] && return 0
	COPIED[$dest]=1
	mkdir -p "$ROOT$(dirname "$dest")"
	cp -L "$src" "$ROOT$dest" || die "cannot copy $src into the bed"
}
add_file() {		# add_file SRC DEST, with shared libraries when dynamically linked
	local src=$1 dest=$2 lib
	[ -f "$src" ] || die "file not found: $src"
	copy_in "$src" "$dest"
	# ldd prints "name => /path (addr)" and "/lib64/ld-linux-x86-64.so.2 (addr)"; static files
	# and scripts make it fail or print no path.
	while IFS= read -r lib; do
		[ -n "$lib" ] && copy_in "$lib" "$lib"
	done < <(ldd "$src" 2>/dev/null | grep -oE '(^|[[:space:]])/[^[:space:]]+' | sed 's/^[[:space:]]*//' | sort -u || true)
	if ldd "$src" 2>/dev/null | grep -q 'not found'; then
		die "$src: shared libraries not found on the host: $(ldd "$src" | grep 'not found' | tr '\n' ' ')"
	fi
}
for f in "$@"; do
	case $f in
	*:/*) add_file "${f%%:/*}" "/${f#*:/}" ;;
	*) add_file "$f" "/$(basename "$f")" ;;
	esac
done
# terminfo for curses front ends (harmless when unused)
for t in l/linux v/vt100 d/dumb x/xterm; do
	for d in /lib/terminfo /usr/share/terminfo; do
		[ -f "$d/$t" ] && { copy_in "$d/$t" "/usr/share/terminfo/$t"; break; }
	done
done
cp "$SCRIPT" "$ROOT/bed-script"

# Every marker carries a per-run token so no output of the script can fake one.
TOKEN=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
MARK="@@BED-$TOKEN"
{
	for e in "${GUEST_ENV[@]+"${GUEST_ENV[@]}"}"; do
		v=${e#*=}
		printf "export %s='%s'\n" "${e%%=*}" "${v//\'/\'\\\'\'}"
	done
} >"$ROOT/bed-env"

cat >"$ROOT/init" <<EOF
#!/bin/busybox sh
MARK='$MARK'
KVER='$KVER'
MODS='${MODS[*]}'
EOF
cat >>"$ROOT/init" <<'EOF'
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root TERM=linux
m() { echo "$MARK $*"; }
bye() { sync; sleep 0.3; poweroff -f; sleep 10; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
# Only emergencies on the console while the script runs: kernel chatter must not break its lines.
echo 1 >/proc/sys/kernel/printk
ulimit -l unlimited
m INFO "kernel $(uname -r) up $(cut -d' ' -f1 /proc/uptime)s, $(grep -c ^processor /proc/cpuinfo) cpu(s), $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) MiB"
grep -qw svm /proc/cpuinfo || { m SKIP "the emulated CPU has no svm flag (QEMU -cpu lacks +svm?)"; bye; }
for mod in $MODS; do
	out=$(insmod /lib/modules/$mod 2>&1) || {
		case $mod in
		kvm-amd.ko|kvm_amd.ko) m SKIP "insmod kvm-amd failed: $out; $(dmesg | grep -iE 'kvm|svm' | tail -n 3 | tr '\n' ' ')" ;;
		*) m FAIL "insmod $mod failed: $out" ;;
		esac
		bye
	}
done
[ -c /dev/kvm ] || { m SKIP "kvm_amd loaded but there is no /dev/kvm: $(dmesg | grep -iE 'kvm|svm' | tail -n 3 | tr '\n' ' ')"; bye; }
BED_BTF=1
for b in vmlinux kvm; do
	[ -e /sys/kernel/btf/$b ] || { m WARN "/sys/kernel/btf/$b is missing: vmexit cannot load its BPF programs"; BED_BTF=0; }
done
export BED_KVER=$KVER BED_BTF
. /bed-env
m INFO "kvm + kvm_amd loaded at $(cut -d' ' -f1 /proc/uptime)s; running the script"
m BEGIN
cd /
sh /bed-script </dev/null 2>&1
rc=$?
m END $rc
w=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:' | head -n 5)
[ -z "$w" ] || m WARN "kernel complained during the run: $(echo "$w" | tr '\n' '|')"
m INFO "done at $(cut -d' ' -f1 /proc/uptime)s"
m OFF
bye
EOF
chmod 0755 "$ROOT/init" "$ROOT/bed-script"
(cd "$ROOT" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$WORK/initramfs.cpio" ||
	die "cannot build the initramfs"

# ------------------------------------------------------------------ boot
LOG=$WORK/serial.log
STATE=$WORK/state
: >"$STATE"
# Sorts the serial console: script output (between BEGIN and END) to stdout, bed messages to
# stderr, kernel messages to the log only (or stderr with -v). Any marker may follow script
# output that did not end with a newline.
filter() {
	local line phase=boot pre rest
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$LOG"
		[ $VERBOSE = 1 ] && printf '%s\n' "$line" >&2
		if [[ $line != *"$MARK "* ]]; then
			[ $phase = script ] && [ $VERBOSE = 0 ] && printf '%s\n' "$line"
			continue
		fi
		pre=${line%%"$MARK "*}
		rest=${line#*"$MARK "}
		[ -n "$pre" ] && [ $phase = script ] && [ $VERBOSE = 0 ] && printf '%s\n' "$pre"
		case $rest in
		BEGIN) phase=script; echo "begin $(date +%s.%N)" >>"$STATE" ;;
		END\ *) phase=post; echo "rc ${rest#END }" >>"$STATE" ;;
		SKIP\ *) echo "skip ${rest#SKIP }" >>"$STATE" ;;
		FAIL\ *) echo "fail ${rest#FAIL }" >>"$STATE" ;;
		WARN\ *) echo "$PROG: warning: ${rest#WARN }" >&2 ;;
		INFO\ *) echo "$PROG: ${rest#INFO }" >&2 ;;
		OFF) echo "off" >>"$STATE" ;;
		esac
	done
}

# Boot the uncompressed vmlinux through its PVH entry when it has one: under TCG this skips
# SeaBIOS' real-mode setup and the xz decompression of the bzImage (about 4 s of 7 here).
KERNEL=$KDIR/vmlinuz
if [ -s "$KDIR/vmlinux" ] && grep -qx 'CONFIG_PVH=y' "$KDIR/config" 2>/dev/null; then
	KERNEL=$KDIR/vmlinux
fi
say "booting $KVER ($(basename "$KERNEL")) under QEMU TCG (-cpu $CPU_MODEL -smp $SMP -m $MEM), timeout ${TIMEOUT}s"
T0=$(date +%s.%N)
set +e
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu "$CPU_MODEL" -smp "$SMP" -m "$MEM" \
	-machine q35 -nodefaults -no-reboot -display none -monitor none -serial stdio \
	-kernel "$KERNEL" -initrd "$WORK/initramfs.cpio" \
	-append "console=ttyS0 rdinit=/init quiet loglevel=3 panic=-1 mitigations=off" \
	</dev/null 2>&1 | filter
st=("${PIPESTATUS[@]}")
set -e
T1=$(date +%s.%N)
[ -n "$SAVE_LOG" ] && cp "$LOG" "$SAVE_LOG"

tail_log() { say "last lines of the serial console:"; tail -n "${1:-25}" "$LOG" | sed 's/^/    /' >&2; }
elapsed=$(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.1f", b-a}')
if grep -q '^skip ' "$STATE"; then
	skip "$(sed -n 's/^skip //p' "$STATE" | head -n 1)"
fi
if grep -q '^fail ' "$STATE"; then
	tail_log; die "$(sed -n 's/^fail //p' "$STATE" | head -n 1)"
fi
if ! grep -q '^rc ' "$STATE"; then
	tail_log 40
	[ "${st[0]}" = 124 ] && die "timed out after ${TIMEOUT}s (raise --timeout?)"
	die "the bed stopped without the script's exit code (qemu exit ${st[0]}); see the serial log above"
fi
rc=$(sed -n 's/^rc //p' "$STATE" | head -n 1)
[[ $rc =~ ^[0-9]+$ ]] || die "garbled exit marker: $rc"
grep -q '^off' "$STATE" || say "warning: no clean power-off (qemu exit ${st[0]})"
begin=$(sed -n 's/^begin //p' "$STATE")
say "script exit $rc; boot to script $(awk -v a="$T0" -v b="$begin" 'BEGIN{printf "%.1f", b-a}')s, total ${elapsed}s"
exit "$rc"
