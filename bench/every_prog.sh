#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 33's second way of measuring what a userspace exit costs, as the issue's independent run
# did it: kernel.bpf_stats_enabled on, one guest of EXITS KVM_EXIT_IO exits (the bundled guest,
# --io, pinned to CPU) under `vmexit stat`, then under bpftrace's VMM-time histogram, and the run
# time of *every* program each tracer holds (its fds' prog_id), per user exit. The denominator is
# the runs of the tracer's kvm_userspace_exit program: other VMs of the host fire the hooks too.
# bench_user_exits alternates the cases over rounds and sums the programs apart; this is one
# plain run of each, to compare with a figure taken that way.
# Usage: bench/every_prog.sh [OUTDIR [EXITS [CPU]]]   (root; OUTDIR holds vmexit and vmexit-guest)
set -u
OUT=${1:-.output} EXITS=${2:-100000} CPU=${3:-1}
[ "$(id -u)" = 0 ] || { echo "every_prog: needs root (BPF)" >&2; exit 1; }
[ -c /dev/kvm ] || { echo "every_prog: no /dev/kvm: the guest cannot run here" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "every_prog: no bpftrace (apt install bpftrace)" >&2; exit 1; }
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1 || exit 1
work=$(mktemp -d)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old; rm -rf "$work"' EXIT
# snap PID: "id name run_time_ns run_cnt" of each program PID holds, by id.
snap() {
	local ids
	ids=$(cat /proc/"$1"/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:\s*//p' | sort -un)
	for i in $ids; do
		bpftool prog show id "$i" -j 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
print(p["id"], p.get("name", "?"), p.get("run_time_ns", 0), p.get("run_cnt", 0))'
	done | sort
}
# one NAME MARKER COMMAND...: COMMAND attached once MARKER is in its output, the guest, the sums.
one() {
	local name=$1 marker=$2 tp
	shift 2
	"$@" >"$work/$name.out" 2>&1 &
	tp=$!
	for _ in $(seq 100); do grep -q "$marker" "$work/$name.out" && break; sleep 0.1; done
	grep -q "$marker" "$work/$name.out" || { echo "every_prog: $name did not start" >&2; exit 1; }
	sleep 0.3
	snap $tp >"$work/$name.a"
	taskset -c "$CPU" "$OUT/vmexit-guest" --vcpus 1 --io "$EXITS" >/dev/null 2>&1 ||
		{ echo "every_prog: the guest failed" >&2; exit 1; }
	snap $tp >"$work/$name.b"
	kill -INT $tp
	wait $tp
	join "$work/$name.a" "$work/$name.b" | awk -v who="$name" '
		{ name[NR] = $2; dt[NR] = $6 - $3; dc[NR] = $7 - $4; tot += dt[NR]
		  if ($2 ~ /^kvm_userspace_e/) n = dc[NR] }
		END { if (!n) { print "every_prog: " who "'"'"'s kvm_userspace_exit program did not run"; exit 1 }
		      for (i = 1; i <= NR; i++) if (dc[i])
			printf "  %-24s %7.1f ns per run, %5.3f runs per user exit, %7.1f ns per user exit\n",
			       name[i], dt[i] / dc[i], dc[i] / n, dt[i] / n
		      printf "%s: every program, %.1f ns per user exit (%d user exits)\n", who, tot / n, n
		      printf "%.1f\n", tot / n > "/dev/stderr" }' 2>"$work/$name.total"
}
echo "every_prog: $EXITS KVM_EXIT_IO exits of one guest pinned to CPU $CPU, per tracer"
one vmexit "hooks: userspace exit" "$OUT/vmexit" stat -v 3600
one bpftrace "Attaching" bpftrace -e 'tracepoint:kvm:kvm_userspace_exit { @s[tid] = nsecs; }
tracepoint:kvm:kvm_fpu /args->load && @s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }'
awk -v v="$(cat "$work/vmexit.total")" -v b="$(cat "$work/bpftrace.total")" \
	'BEGIN { printf "vmexit / bpftrace, every program: %.2fx (issue 33: <= 0.40)\n", v / b }'
