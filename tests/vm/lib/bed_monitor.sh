# SPDX-License-Identifier: GPL-2.0
# Sourced by a QEMU bed backend (beds/svm.sh): what each vCPU was doing when a bed timed out.
# A bed that hangs (a soft lockup, or a console silent with both vCPUs' interrupts off) said
# nothing of where it was stuck; with QEMU's human monitor on a unix socket, the harness asks
# at the timeout, before it kills QEMU, for every vCPU's registers and the top of its stack,
# named with the bed kernel's symbols (lib/vcpu_dump.py), and prints them as "bed: vcpus: ...".
#
# Debian's linux-image ships a stub System.map (the real one is in the 850 MB -dbg package), so
# the symbols are the bed kernel's own /proc/kallsyms, read once from a bed booted for it (same
# kernel, same modules, nokaslr, which the monitored boot also gets: PVH boots of vmlinux skip
# KASLR anyway, a bzImage boot would not) and cached as $KDIR/kallsyms.
#
# VMEXIT_BED_MONITOR=0 turns it off (QEMU then runs under timeout(1) as before).
#
# In: WORK, KDIR, KVER, KSERIES, BED_NAME, HERE, TIMEOUT, say. Out: monitor_on, monitor_append,
# monitor_run.

monitor_on() {
	[ "${VMEXIT_BED_MONITOR:-1}" != 0 ] && command -v python3 >/dev/null
}

# The kernel command line's share: fixed addresses, so that the cached symbols apply.
monitor_append() {
	monitor_on && echo " nokaslr"
	return 0
}

# The bed kernel's text symbols in $KDIR/kallsyms, made once (a bed booted for it; 30-60 s
# under load).
monitor_kallsyms() {
	local f=$KDIR/kallsyms s tmp
	[ -s "$f" ] && return 0
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmexit-ksyms.XXXXXX")
	s=$tmp/ksyms.sh
	echo "echo KSYMS_BEGIN; grep -E ' [tTwW] ' /proc/kallsyms | gzip | base64; echo KSYMS_END" >"$s"
	# Without the monitor, so nokaslr is asked here; and only that: kernel messages at a higher
	# loglevel would break into the base64.
	if VMEXIT_BED_MONITOR=0 VMEXIT_BED=$BED_NAME VMEXIT_BED_KVER=$KVER VMEXIT_BED_OFFLINE=1 \
			VMEXIT_BED_APPEND=nokaslr "$HERE/bed.sh" --kernel "$KSERIES" --timeout 180 "$s" \
			2>/dev/null |
		sed -n '/^KSYMS_BEGIN$/,/^KSYMS_END$/{/^KSYMS_/!p}' | base64 -d 2>/dev/null |
		gzip -dc >"$tmp/kallsyms" 2>/dev/null && [ "$(wc -l <"$tmp/kallsyms")" -gt 10000 ]; then
		mv "$tmp/kallsyms" "$f.$$" && mv "$f.$$" "$f"
	fi
	rm -rf "$tmp"
	[ -s "$f" ]
}

# What the vCPUs were doing, on stderr; when the monitor does not answer, QEMU's own threads.
monitor_dump() {
	local sock=$1 qpid=$2 ksyms=
	say "vcpus: the bed timed out; asking QEMU's monitor where each vCPU is"
	python3 "$HERE/lib/vcpu_dump.py" "$sock" >"$WORK/vcpus.raw" 2>&1
	local rc=$?
	# Names come after the registers, which must be read before QEMU is killed: the symbols may
	# take a bed boot to make, so the monitor is asked again, named, only if QEMU still runs.
	monitor_kallsyms && ksyms=$KDIR/kallsyms
	if [ -n "$ksyms" ] && [ $rc = 0 ]; then
		python3 "$HERE/lib/vcpu_dump.py" "$sock" "$ksyms" >"$WORK/vcpus.named" 2>&1 &&
			cp "$WORK/vcpus.named" "$WORK/vcpus.raw"
	fi
	sed 's/^/bed: vcpus: /' "$WORK/vcpus.raw" >&2
	[ -n "$ksyms" ] || say "vcpus: no symbols for $KVER (the bed for /proc/kallsyms failed)"
	if [ $rc != 0 ]; then
		say "vcpus: QEMU's threads (pid $qpid):"
		for t in /proc/"$qpid"/task/*; do
			echo "bed: vcpus:   $(cat "$t/comm" 2>/dev/null)" \
			     "state $(awk '{print $3}' "$t/stat" 2>/dev/null)" \
			     "wchan $(cat "$t/wchan" 2>/dev/null)" >&2
		done
		command -v gdb >/dev/null && timeout 60 gdb -batch -p "$qpid" \
			-ex 'thread apply all bt 12' 2>/dev/null | sed 's/^/bed: vcpus:   /' >&2
	fi
}

# monitor_run CMD...: runs the emulator CMD (which must take -monitor unix:$WORK/monitor.sock,
# server=on,wait=off) for TIMEOUT seconds, as timeout(1) would (exit 124 when killed), with the
# dump before the kill. CMD's stderr joins its stdout (the console), the dump goes to stderr.
monitor_run() {
	local qpid wpid st
	"$@" </dev/null 2>&1 &
	qpid=$!
	(
		sp=
		trap '[ -n "$sp" ] && kill $sp 2>/dev/null; exit 0' TERM
		sleep "$TIMEOUT" & sp=$!; wait $sp
		kill -0 $qpid 2>/dev/null || exit 0
		: >"$WORK/timed_out"
		monitor_dump "$WORK/monitor.sock" $qpid
		kill -TERM $qpid 2>/dev/null
		sleep 5 & sp=$!; wait $sp
		kill -KILL $qpid 2>/dev/null
	) &
	wpid=$!
	# Quiet: bash would report the kill of a hung QEMU as a job's death.
	{ wait $qpid; } 2>/dev/null
	st=$?
	kill -TERM $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	[ -e "$WORK/timed_out" ] && return 124
	return $st
}
