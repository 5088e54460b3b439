#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the benchmarks `make bench` built (bench/bench_*.c) and prints their figures; nothing is
# asserted. Builds nothing itself. Usage: bench/run.sh [OUTPUT dir, default .output]
set -u
OUT=${1:-.output}
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root: the benchmarks load BPF programs" >&2
	exit 1
fi
# The figures depend on the host: say which one.
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
echo "host: $(uname -r), $(nproc) CPUs, $cpu, clocksource $cs"
# bench_report runs the vmexit this build made, whatever its default lookup would find.
export VMEXIT_BIN="$OUT/vmexit"
cat <<'EOF'
what each benchmark prints:
  bench_report    `vmexit report` on a 10 M-event recording, per output, to /dev/null:
                  wall and CPU seconds, events/s and input MB/s; --perfetto in both
                  formats (JSON, protobuf) also its bytes per event (the recording is cached
                  under /tmp; skipped when it is missing and < 3 GB are free)
  bench_handlers  the BPF handlers per exit pair, in the kernel with bpf_loop: dispatch (raw
                  and classic tracepoint), the handlers' own work, the clock reads
  bench_host_tax  what `vmexit stat` costs processes that are not VMs: a getppid() loop
                  alone and with vmexit attached, alternating, medians (target <= 2 %)
  bench_stream    events/s the stream consumers (record file, default lines to /dev/null)
                  take from the 16 MB ring with zero lost records, a BPF generator on one
                  CPU and the consumer on the other; plus the unpaced maximum and its loss
  bench_startup   `vmexit stat`'s and `vmexit stream`'s start-up as a user sees it: exec to
                  tracing (BTF, load, verification, attach), then SIGINT to exit (detach;
                  stream's drain), medians (targets: <= 150 ms up, <= 100 ms down)
  bench_capture   the guest's 100,000 IO exits untraced, under `perf record -e
                  kvm:kvm_userspace_exit`, `vmexit record`, `stream`, `stream --json`, in
                  turn: the guest's cost per exit (time, CPU) and the tracer's CPU as
                  ratios to perf's, every exit captured; then one vCPU per CPU flat out,
                  with the loss
                  (targets: guest <= 1x perf; tracer CPU <= 0.5x record, <= 1x stream)
  bench_user_exits the bundled guest's KVM_EXIT_IO exits alone, under empty programs on
                  vmexit's hooks (the floor), `vmexit stat` and bpftrace's VMM-time histogram,
                  alternating: BPF run time per exit (kernel statistics) and the guest's CPU
                  time per exit over alone, medians and ratios (targets 0.40x, 0.40x bpftrace's),
                  the end-to-end verdict against the rounds' quartiles; BPF time in three sums:
                  the user-exit hooks' programs (bpftrace's are these alone), the kvm_exit/
                  kvm_entry pair's (where KVM traces them), the rest; `stat --by key` against
                  plain stat; VMEXIT_BENCH_ROUNDS=N (default 11), VMEXIT_BENCH_EXITS=N (default
                  30000) and VMEXIT_BENCH_CPU=N (the guest pinned); without /dev/kvm, `make
                  bench-bed-user` runs it in a nested bed (bench/bed_user_exits.sh)
  bench_switch    what --split adds to a context switch (pipe ping-pong on one CPU): tasks
                  without vmexit's state, vCPU threads idle, with an exit in flight, and
                  with --stacks (a stack taken per switch out, charged per switch in)
  bench_guest_trace the --guest-trace reader on a 10^6-event guest trace (~100 MB): wall
                  seconds, events/s, MB/s and peak RSS (the file is parsed as it is read), and
                  python3's json.load of the same file; then names of 30,000 and 300,000 \u
                  escapes (the time grows with them, not with their square)
  every_prog      issue 33's other way of measuring a user exit: one guest of 100,000 IO exits
                  under `vmexit stat`, then bpftrace, every program each holds, BPF run
                  time per user exit (kernel.bpf_stats_enabled), ratio (target 0.40x)
  import_perf     `vmexit report -i perf.data` (a perf capture of the guest's IO exits): the
                  native reader against perf script's, wall seconds and records/s, ratio
serve figures:
  bench_serve     a `vmexit serve` scrape of 10,000 series (synthesized cells, all changing):
                  sample + snapshot + render per format, GET over loopback, resident memory
  bench_serve_scale  serve at microVM density: 1,000 guests x 4 vCPUs x 10 reasons (40,000
                  synthesized cells): series, render time and CPU, bytes plain and gzipped per
                  exposition (text classic, protobuf native/classic/both), CPU per gzipped GET
                  as a share of a core at 15 s, resident memory, against issue 30's targets
EOF
rc=0
found=0
for b in "$OUT"/bench/bench_*; do
	[ -x "$b" ] || continue
	found=1
	echo
	echo "=== $(basename "$b")"
	"$b"
	r=$?
	[ $r -eq 0 ] || { echo "*** $(basename "$b") failed (exit $r)"; rc=1; }
done
[ $found -eq 1 ] || { echo "bench: nothing built in $OUT/bench (run make bench)" >&2; exit 1; }
echo
echo "=== import_perf"
bench/import_perf.sh "$OUT" || { echo "*** import_perf failed"; rc=1; }
echo
echo "=== every_prog"
bench/every_prog.sh "$OUT" || { echo "*** every_prog failed"; rc=1; }
exit $rc
