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
