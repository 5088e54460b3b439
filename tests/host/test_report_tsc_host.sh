#!/bin/bash
# record captures kvm_write_tsc_offset; report lists each vCPU's latest guest TSC offset, and the
# number of writes it saw equals what perf counts on the same tracepoint for the same workload.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd perf linux-perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
VCPUS=3
perf stat -x, -o "$tmp/perf.csv" -e kvm:kvm_write_tsc_offset -- \
	"$OUT/vmexit" record -o "$tmp/r.vmexit" -- "$OUT/vmexit-guest" --vcpus $VCPUS --io 50 \
	2>"$tmp/err" || { cat "$tmp/err"; fail "record failed"; }
"$OUT/vmexit" report -i "$tmp/r.vmexit" >"$tmp/report" || fail "report failed"
cat "$tmp/report"
perf_n=$(awk -F, '/kvm_write_tsc_offset/ {print $1}' "$tmp/perf.csv")
# VM, vCPU, OFFSET, (signed), WRITES, FROM (debugfs or trace: where the offset used came from)
rows=$(awk '/^Guest TSC offsets/ {on = 1; getline; next} on && NF == 6' "$tmp/report")
nrows=$(grep -c . <<<"$rows")
writes=$(awk '{s += $5} END {print s + 0}' <<<"$rows")
vcpus=$(awk '{print $2}' <<<"$rows" | sort -n | tr '\n' ' ')
echo "rows $nrows (expected $VCPUS), vCPUs: $vcpus, writes $writes, perf $perf_n"
[ "$nrows" = $VCPUS ] || fail "one TSC offset row per vCPU expected"
[ "$vcpus" = "0 1 2 " ] || fail "vCPUs 0..2 expected"
[ "$writes" = "$perf_n" ] && [ "$perf_n" -gt 0 ] || fail "writes $writes != perf count $perf_n"
echo "PASS: test_report_tsc_host"
