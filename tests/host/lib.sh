# Shared helpers for the host tests: sourced, not run.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need_kvm_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root for BPF"
	[ -c /dev/kvm ] || skip "no /dev/kvm on this host (load kvm)"
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	[ -d /sys/kernel/tracing/events/kvm ] || skip "no kvm tracepoints (load the kvm module)"
}
