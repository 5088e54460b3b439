# Shared helpers for the host tests: sourced, not run.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
# What every test that loads vmexit's BPF programs and runs the bundled guest needs.
need_kvm_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root to load BPF programs (run as root)"
	[ -r /sys/kernel/btf/vmlinux ] ||
		skip "kernel has no BTF (/sys/kernel/btf/vmlinux): BPF CO-RE unavailable"
	[ -c /dev/kvm ] || skip "/dev/kvm does not exist: no KVM on this host (load kvm)"
	exec 9<>/dev/kvm 2>/dev/null || skip "/dev/kvm cannot be opened read-write"
	exec 9>&-
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	[ -d /sys/kernel/tracing/events/kvm ] || skip "no kvm tracepoints (load the kvm module)"
}

# The helpers below expect $TMP (a scratch directory) and $VMEXIT (the binary under test).
# chk CMD...: runs CMD with a timeout and keeps a copy of its stderr, which sanitizer_reports
# scans at the end (OUTDIR from `make SAN=1`): a report from a run whose exit status or stderr
# is not otherwise looked at still fails the test.
chk() {
	local e rc
	e=$(mktemp "$TMP/stderr.XXXXXX")
	timeout 120 "$@" 2>"$e"
	rc=$?
	cat "$e" >&2
	cat "$e" >>"$TMP/all-stderr"
	rm -f "$e"
	return $rc
}

# need_stream ARGS...: can `vmexit stream ARGS -- true` load here? Only vmexit's own "this host
# lacks X" messages skip; any other failure (a crash, a sanitizer report) fails the test.
need_stream() {
	local probe
	probe=$(chk "$VMEXIT" stream --json "$@" -- true 2>&1 >/dev/null) && return 0
	case $probe in
	*"needs root"*|*"has no BTF"*|*tracefs*|*"no kvm tracepoints"*|*"no kvm_exit"*|\
	*"cannot load the BPF programs"*|*"cannot attach"*|*"cannot open the BPF object"*)
		skip "BPF tracing unavailable on this host: $probe" ;;
	*)
		echo "FAIL: vmexit stream $* -- true: $probe"; exit 1 ;;
	esac
}

# sanitizer_reports: prints the reports chk collected; true when there were some.
sanitizer_reports() {
	grep -E -A12 "runtime error|ERROR: (Address|Leak)Sanitizer" "$TMP/all-stderr" 2>/dev/null
}
