# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/vm/bed.sh: builds the bed's initramfs (busybox, the modules, the FILEs with
# their shared libraries, the script) and its /init, which speaks the job protocol on the console:
# every line "<MARK> WORD ..." with MARK = "@@BED-<random token>" (see tests/vm/README.md).
#
# In:  WORK, BUSYBOX, MODDIR, KVER, SCRIPT, GUEST_ENV, BED_NAME, BED_CPUFLAG (flag /proc/cpuinfo
#      must show, or empty), BED_MODULES (a failed insmod of one of these is a SKIP: the bed
#      cannot run here; of a dependency, a failure), BED_COMPRESS (cat | gzip -1 ...), the FILE
#      arguments; die.
# Out: $WORK/initramfs, MARK.

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
	if [ -d "$src" ]; then	# a tree (python's library, say): copied as it is
		mkdir -p "$ROOT$dest"
		cp -rL "$src/." "$ROOT$dest/" || die "cannot copy $src into the bed"
		return 0
	fi
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

build_initramfs() {
	local m f t d e v targets=
	ROOT=$WORK/root
	mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,root,etc,lib/modules}
	cp "$BUSYBOX" "$ROOT/bin/busybox"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOT/etc/passwd"
	echo 'root:x:0:' >"$ROOT/etc/group"
	MODS=()
	while IFS= read -r m; do
		cp "$MODDIR/$m" "$ROOT/lib/modules/"
		MODS+=("$m")
	done <"$MODDIR/order"
	for f in "${FILES[@]+"${FILES[@]}"}"; do
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
	MARK="@@BED-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
	for e in "${GUEST_ENV[@]+"${GUEST_ENV[@]}"}"; do
		v=${e#*=}
		printf "export %s='%s'\n" "${e%%=*}" "${v//\'/\'\\\'\'}"
	done >"$ROOT/bed-env"
	for m in $BED_MODULES; do targets="$targets ${m//_/-}.ko"; done

	local mods=${MODS[*]+"${MODS[*]}"}
	cat >"$ROOT/init" <<EOF
#!/bin/busybox sh
MARK='$MARK'
KVER='$KVER'
MODS='$mods'
TARGETS='$targets '
CPUFLAG='$BED_CPUFLAG'
BED='$BED_NAME'
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
# The loopback, for every script: a server on 127.0.0.1 (vmexit serve, prometheus) needs it up.
ip link set lo up || { m FAIL "cannot bring the loopback up"; bye; }
m INFO "kernel $(uname -r) up $(cut -d' ' -f1 /proc/uptime)s, $(grep -c ^processor /proc/cpuinfo) cpu(s), $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) MiB"
if [ -n "$CPUFLAG" ] && ! grep -qw "$CPUFLAG" /proc/cpuinfo; then
	m SKIP "the emulated CPU has no $CPUFLAG flag"; bye
fi
for mod in $MODS; do
	out=$(insmod /lib/modules/$mod 2>&1) || {
		case $TARGETS in
		*" $mod "*) m SKIP "insmod $mod failed: $out; $(dmesg | grep -iE 'kvm|svm|vmx' | tail -n 3 | tr '\n' ' ')" ;;
		*) m FAIL "insmod $mod failed: $out" ;;
		esac
		bye
	}
done
[ -c /dev/kvm ] || { m SKIP "no /dev/kvm after loading the modules: $(dmesg | grep -iE 'kvm|svm|vmx' | tail -n 3 | tr '\n' ' ')"; bye; }
BED_BTF=1
for b in vmlinux ${MODS:+kvm}; do
	[ -e /sys/kernel/btf/$b ] || { m WARN "/sys/kernel/btf/$b is missing: vmexit cannot load its BPF programs"; BED_BTF=0; }
done
export BED_KVER=$KVER BED_BTF BED
. /bed-env
m INFO "modules loaded at $(cut -d' ' -f1 /proc/uptime)s; running the script"
dmesg_lines=$(dmesg | wc -l)
m BEGIN
cd /
sh /bed-script </dev/null 2>&1
rc=$?
m END $rc
# Only what the kernel said while the script ran (Bochs makes the boot warn about xstate sizes).
w=$(dmesg | tail -n +$((dmesg_lines + 1)) | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:' | head -n 5)
[ -z "$w" ] || m WARN "kernel complained during the run: $(echo "$w" | tr '\n' '|')"
m INFO "done at $(cut -d' ' -f1 /proc/uptime)s"
m OFF
bye
EOF
	chmod 0755 "$ROOT/init" "$ROOT/bed-script"
	(cd "$ROOT" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | $BED_COMPRESS) \
		>"$WORK/initramfs" || die "cannot build the initramfs"
	rm -rf "$ROOT"
}
