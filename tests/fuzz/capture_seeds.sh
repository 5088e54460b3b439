#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Makes the seed captures of the trace.dat and perf.data fuzzers on this host: a trace.dat
# (version 7 uncompressed, and version 6 converted from it) of a private tracefs instance with
# kvm:* on, and a `perf record -e 'kvm:*'` perf.data. Where /dev/kvm works the bundled guest
# runs inside both, so that they hold kvm records; elsewhere they hold the formats alone.
# kallsyms, printk formats and every event system but ftrace and kvm are left out (a private
# mount namespace hides them from trace-cmd): 90 KB instead of 7 MB, a faster fuzzer.
#
# Usage: tests/fuzz/capture_seeds.sh OUTDIR DIR   (OUTDIR holds vmexit-guest; seeds go to DIR)
# Exit: 0, or 77 when this host cannot make them (no root or tracefs; the reason is printed).
set -u
OUT=${1:?usage: $0 OUTDIR DIR}
DIR=${2:?usage: $0 OUTDIR DIR}
T=/sys/kernel/tracing
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (tracefs, perf record -e kvm:*)"; exit 77; }
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
[ -d $T/events/kvm ] || { echo "SKIP: no kvm tracepoints (load the kvm module)"; exit 77; }
for c in trace-cmd perf; do
	command -v $c >/dev/null || { echo "FAIL: $c not installed (tools/install-deps.sh)"; exit 1; }
done
mkdir -p "$DIR"
work=()
if "$OUT/vmexit-guest" --io 1 >/dev/null 2>&1; then
	work=("$OUT/vmexit-guest" --io 3 --in 2 --mmio 2 --vcpus 2)
else
	echo "note: the bundled guest does not run here (no working /dev/kvm): the seeds hold" \
		"formats, no kvm records"
fi
inst=vmexit-seeds-$$
itd=$T/instances/$inst
ev=$(mktemp -d)
trap 'rmdir "$itd" 2>/dev/null; rm -rf "$ev"' EXIT
mkdir "$itd" && echo 1 >"$itd/options/event-fork" || exit 1
if [ ${#work[@]} -gt 0 ]; then
	sh -c "echo \$\$ > $itd/set_event_pid; echo 1 > $itd/events/kvm/enable; exec \"\$@\"" sh \
		"${work[@]}" >/dev/null || { echo "FAIL: ${work[*]}"; exit 1; }
fi
echo 0 >"$itd/tracing_on"
cp $T/events/header_page $T/events/header_event "$ev/"
for f in $T/events/ftrace/*/format $T/events/kvm/*/format; do
	d=${f%/format}
	mkdir -p "$ev/${d#$T/events/}" && cp "$f" "$ev/${d#$T/events/}/"
done
unshare -m sh -c "mount --make-rprivate / && mount --bind /dev/null /proc/kallsyms &&
	mount --bind /dev/null $T/printk_formats && mount --bind $ev $T/events &&
	trace-cmd extract -B $inst --compression none -o $DIR/v7.dat" >"$ev/tc.out" 2>&1 ||
	{ echo "FAIL: trace-cmd extract: $(tr '\n' ' ' <"$ev/tc.out")"; exit 1; }
trace-cmd convert --file-version 6 -i "$DIR/v7.dat" -o "$DIR/v6.dat" >"$ev/tc.out" 2>&1 ||
	{ echo "FAIL: trace-cmd convert: $(tr '\n' ' ' <"$ev/tc.out")"; exit 1; }
[ ${#work[@]} -gt 0 ] || work=(true)
perf record -q -e 'kvm:*' -o "$DIR/perf.data" -- "${work[@]}" >/dev/null 2>"$ev/perf.err" ||
	{ echo "FAIL: perf record: $(tr '\n' ' ' <"$ev/perf.err")"; exit 1; }
ls -l "$DIR"
