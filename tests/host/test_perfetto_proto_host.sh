#!/bin/bash
# --perfetto FILE.pftrace on this host's KVM: the protobuf trace decodes with protoc against
# docs/perfetto-subset.proto and holds the same processes, tracks, slices, instants and counter
# values as the JSON trace of the same recording (tests/unit/perfetto_canon.py, line for line);
# stream writes it live with one slice per exit the guest made; --perfetto-format overrides the
# file name; a failed write is reported.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd protoc protobuf-compiler
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
TMP=$(mktemp -d /tmp/vmexit-test-pftrace.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# The schema and the canonical-lines script, from the tree (in the nested bed: /docs, /tests).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
pass() { echo "ok: $*"; }
decode() {	# decode TRACE > TEXT: protoc's text of a protobuf trace
	protoc --decode=vmexit.perfetto.Trace -I "$ROOT/docs" "$ROOT/docs/perfetto-subset.proto" <"$1"
}
canon() {	# canon json|proto FILE: the canonical lines of a trace
	if [ "$1" = proto ]; then
		decode "$2" >"$2.txt" && python3 "$ROOT/tests/unit/perfetto_canon.py" proto "$2.txt"
	else
		python3 "$ROOT/tests/unit/perfetto_canon.py" json "$2"
	fi
}
V=2 N=200
need_stream --kvm-events pio

# 1. stream: one IO slice on the VMM tracks per IO exit the guest says it made.
chk "$VMEXIT" stream --kvm-events pio --perfetto "$TMP/live.pftrace" -- "$GUEST" --io $N \
	--vcpus $V 2>"$TMP/guest.out" || fail "stream --perfetto FILE.pftrace: $(cat "$TMP/guest.out")"
made=$(sed -n 's/.* IO \([0-9]*\) .*/\1/p' "$TMP/guest.out")
[ -n "$made" ] && [ "$made" -ge $((V * N)) ] || fail "the guest's summary: $(cat "$TMP/guest.out")"
canon proto "$TMP/live.pftrace" >"$TMP/live.canon" || fail "stream's protobuf does not decode"
got=$(grep -c '^X|[0-9]*|vCPU [0-9]* (VMM)|[0-9]*|[0-9]*|kvm_userspace_exit|IO|' "$TMP/live.canon")
[ "$got" = "$made" ] && pass "stream: $got IO slices, as the guest made" ||
	fail "stream: $got IO slices, the guest made $made"
pios=$(grep -c '^I|t|[0-9]*|vCPU [0-9]*|[0-9]*|kvm_event|kvm_pio|' "$TMP/live.canon")
[ "$pios" -ge "$made" ] && pass "stream: $pios kvm_pio instants" ||
	fail "stream: $pios kvm_pio instants for $made IO exits"

# 2. report: the same trace in both formats, with perf stat's counters of the same run.
chk perf stat -I 100 -x, -e task-clock,context-switches -o "$TMP/ps.csv" -- \
	"$VMEXIT" record --kvm-events pio -o "$TMP/r.vmexit" -- "$GUEST" --io $N --vcpus $V \
	--mmio 20 --hlt 10 --name pf-guest >/dev/null || fail "record"
values=$(grep -cE '^ *[0-9.]+,[0-9.]+,' "$TMP/ps.csv")
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/r.pftrace" ||
	fail "report .pftrace"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/r.json" || fail "report .json"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/c.pftrace" --counters "$TMP/ps.csv" \
	2>"$TMP/c.err" || fail "report --counters: $(cat "$TMP/c.err")"
grep -q "up to 1 s early" "$TMP/c.err" || fail "--counters placed by the second, unsaid"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/c.json" --counters "$TMP/ps.csv,start=100.25" ||
	fail "report --counters FILE,start=S"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/c2.pftrace" \
	--counters "$TMP/ps.csv,start=100.25" || fail "report --counters FILE,start=S (proto)"
canon proto "$TMP/c2.pftrace" >"$TMP/c2.canon" && canon json "$TMP/c.json" >"$TMP/cj.canon" &&
	diff -q "$TMP/c2.canon" "$TMP/cj.canon" >/dev/null || fail "--counters: formats differ"
got=$(grep -c '^C|0|' "$TMP/c2.canon")
first=$(grep -m1 '^C|0|' "$TMP/c2.canon" | cut -d'|' -f3)
[ "$got" = "$values" ] && [ "$values" -gt 0 ] && [ "$first" = 100250000000 ] &&
	pass "--counters: $got values of perf stat, from start=100.25 s" ||
	fail "--counters: $got values (perf wrote $values), first at $first"
canon proto "$TMP/c.pftrace" | grep -c '^C|0|' | grep -qx "$values" ||
	fail "--counters placed by '# started on': not every value"
printf '1.27,msec,task-clock,1274148,100.00\n' >"$TMP/bad.csv"
err=$("$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/x.pftrace" --counters "$TMP/bad.csv" 2>&1)
[ $? = 1 ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ $err == *"$TMP/bad.csv:1: "* ]] &&
	pass "counters of another shape: $err" || fail "counters of another shape: '$err'"
grep -v started "$TMP/ps.csv" >"$TMP/nostart.csv"
err=$("$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/x.pftrace" --counters "$TMP/nostart.csv" 2>&1)
[ $? = 1 ] && [[ $err == *"no '# started on' line"*",start=S"* ]] &&
	pass "counters without a start: $err" || fail "counters without a start: '$err'"
canon proto "$TMP/r.pftrace" >"$TMP/p.canon" || fail "report's protobuf does not decode"
canon json "$TMP/r.json" >"$TMP/j.canon" || fail "report's JSON does not load"
diff "$TMP/j.canon" "$TMP/p.canon" >"$TMP/diff" ||
	fail "protobuf and JSON traces differ: $(head -5 "$TMP/diff")"
x=$(grep -c '^X|' "$TMP/p.canon")
i=$(grep -c '^I|' "$TMP/p.canon")
t=$(grep -c '^T|' "$TMP/p.canon")
grep -q '^P|[0-9]*|pf-guest$' "$TMP/p.canon" || fail "no process named pf-guest"
[ "$x" -ge $((V * (N + 30))) ] && [ "$i" -gt 0 ] && [ "$t" -ge $((2 * V)) ] &&
	pass "report: protobuf = JSON: $x slices, $i instants, $t tracks" ||
	fail "report: $x slices, $i instants, $t tracks"
echo "size: protobuf $(stat -c %s "$TMP/r.pftrace") B, JSON $(stat -c %s "$TMP/r.json") B"

# 3. --perfetto-format wins over the name; - (standard output) is JSON unless told.
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/named.json" --perfetto-format proto &&
	cmp -s "$TMP/named.json" "$TMP/r.pftrace" && pass "--perfetto-format proto" ||
	fail "--perfetto-format proto with a .json name"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/named.pftrace" --perfetto-format json &&
	cmp -s "$TMP/named.pftrace" "$TMP/r.json" && pass "--perfetto-format json" ||
	fail "--perfetto-format json with a .pftrace name"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto - | cmp -s - "$TMP/r.json" ||
	fail "--perfetto - is not the JSON trace"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto - --perfetto-format proto |
	cmp -s - "$TMP/r.pftrace" && pass "--perfetto -: JSON, or protobuf when told" ||
	fail "--perfetto - --perfetto-format proto"

# 4. Usage and write errors: one line, non-zero status.
err=$("$VMEXIT" report -i "$TMP/r.vmexit" --perfetto x.pftrace --perfetto-format pb 2>&1)
[ $? = 2 ] && [[ $err == *"--perfetto-format 'pb'"* ]] && pass "bad --perfetto-format: $err" ||
	fail "bad --perfetto-format: $err"
err=$("$VMEXIT" report -i "$TMP/r.vmexit" --perfetto-format proto 2>&1)
[ $? = 2 ] && pass "--perfetto-format alone: usage error" || fail "--perfetto-format alone: $err"
err=$("$VMEXIT" report -i "$TMP/r.vmexit" --perfetto /dev/full --perfetto-format proto 2>&1)
[ $? = 1 ] && [[ $err == *"No space left"* ]] && pass "full disk: $err" ||
	fail "a failed write: '$err'"
if sanitizer_reports; then fail "sanitizer reports"; fi
echo "PASS: test_perfetto_proto_host"
