#!/bin/bash
# Real kernel, this host: `vmexit serve --keys N` exports each guest x reason's N busiest keys
# as series of their own and the rest summed as key="other", with exact counts from the bundled
# guest (2 vCPUs, each: 300 outs to 0xe9, 200 ins from 0xe8, 100 MMIO writes, 50 HLTs): with
# --keys 2 every key of its own, with --keys 1 the ins in "other". Both formats parse (promtool,
# the strict OpenMetrics parser). $1: the build directory.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd curl curl
need_cmd promtool prometheus
# Debian's python3 with python3-prometheus-client (the strict OpenMetrics parser).
PY=/usr/bin/python3
[ -x "$PY" ] || fail "$PY not installed (apt-get install python3)"
serve_test_init
S2=
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; [ -n "$S2" ] && kill "$S2" 2>/dev/null;
      wait 2>/dev/null; rm -rf "$TMP"' EXIT
NAME=keys-$$

serve_bg "$VMEXIT" serve --listen 127.0.0.1:0 --keys 2
[ -n "$URL" ] || { cat "$TMP/serve.err"; fail "vmexit serve --keys 2 did not start"; }
URL2=$URL S2=$SPID
mv "$TMP/serve.err" "$TMP/serve2.err"
serve_bg "$VMEXIT" serve --listen 127.0.0.1:0 --keys 1
[ -n "$URL" ] || { cat "$TMP/serve.err"; fail "vmexit serve --keys 1 did not start"; }
URL1=$URL

# The guest stays 30 s after its vCPUs are done (each thread ended in its done exit, port 0xea,
# which never completes): scraped meanwhile, every other exit is complete. Each vCPU makes its outs before
# its ins, so the outs are never fewer: --keys 1 chooses 0xe9 at whichever scrape it first sees
# the ins.
"$OUT/vmexit-guest" --name "$NAME" --vcpus 2 --io 300 --in 200 --mmio 100 --hlt 50 \
	--linger 30 >/dev/null 2>"$TMP/guest.err" &
GPID=$!
# The IO exits of the guest's key series: its outs and ins, and each vCPU's done exit once its
# thread has ended in it (counted then, as its cell counts it).
io_keys() {
	curl -sf "$1" | grep -F "vmexit_key_exits_total{" | grep -F "guest=\"$NAME\"" |
		grep -F 'kind="user"' | grep -F 'reason="IO"' | awk '{ n += $NF } END { print n + 0 }'
}
# Until both exporters have seen the guest's 2 x 50 HLTs (its last exits before the done one)
# and its vCPU threads end.
for _ in $(seq 100); do
	n=0
	for u in "$URL1" "$URL2"; do
		curl -sf "$u" | grep -F "guest=\"$NAME\"" | grep -q 'reason="HLT".*} 100$' &&
			[ "$(io_keys "$u")" = $((2 * (300 + 200 + 1))) ] && n=$((n + 1))
	done
	[ $n = 2 ] && break
	sleep 0.1
done
sleep 0.2
curl -sf "$URL1" >"$TMP/k1.prom" || fail "scrape of --keys 1 failed"
curl -sf "$URL2" >"$TMP/k2.prom" || fail "scrape of --keys 2 failed"
curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' "$URL1" >"$TMP/k1.om" ||
	fail "OpenMetrics scrape failed"
kill "$GPID" 2>/dev/null
wait "$GPID" 2>/dev/null

promtool check metrics <"$TMP/k1.prom" || fail "promtool check metrics rejects the text format"
$PY - "$TMP" "$NAME" <<'PY'
import re, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
d, name = sys.argv[1], sys.argv[2]
bad = []
def check(what, got, want):
    print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
def keys(path):
    out = {}
    for line in open(path):
        m = re.match(r'vmexit_key_exits_total\{(.*)\} (\S+)$', line)
        if not m:
            continue
        l = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if l["guest"] == name and l["kind"] == "user":
            out[(l["reason"], l["key_kind"], l["key"], l["key_dir"], l["key_name"])] = int(m.group(2))
    return out
io, inn, mmio, hlt = 2 * 300, 2 * 200, 2 * 100, 2 * 50
# No QEMU map: the MMIO writes' series is their 4 KiB page's (key_groups.h).
# Each vCPU's thread ended in its done exit (port 0xea), which never completed: counted all the
# same, as vmexit_exits_total counts it, in key="other" (the third key of IO).
check("--keys 2: every key its own series", keys(f"{d}/k2.prom"),
      {("IO", "port", "0xe9", "out", "debugcon"): io, ("IO", "port", "0xe8", "in", ""): inn,
       ("IO", "other", "other", "", ""): 2,
       ("MMIO", "mmio", "0x10000000-0x10000fff", "write", ""): mmio, ("HLT", "none", "none", "", ""): hlt})
check("--keys 1: the busiest key, the ins in other", keys(f"{d}/k1.prom"),
      {("IO", "port", "0xe9", "out", "debugcon"): io, ("IO", "other", "other", "", ""): inn + 2,
       ("MMIO", "mmio", "0x10000000-0x10000fff", "write", ""): mmio, ("HLT", "none", "none", "", ""): hlt})
def exits(path):
    out = {}
    for line in open(path):
        m = re.match(r'vmexit_exits_total\{(.*)\} (\S+)$', line)
        l = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))) if m else {}
        if l.get("guest") == name and l.get("kind") == "user":
            out[l["reason"]] = out.get(l["reason"], 0) + int(m.group(2))
    return out
for f in ("k1", "k2"):
    per = {}
    for k, v in keys(f"{d}/{f}.prom").items():
        per[k[0]] = per.get(k[0], 0) + v
    check(f"{f}: the key series of each reason sum to its vmexit_exits_total", per,
          exits(f"{d}/{f}.prom"))
fams = {f.name: f for f in text_string_to_metric_families(open(f"{d}/k1.om").read())}
check("OpenMetrics: the key families", sorted(n for n in fams if n.startswith("vmexit_key")),
      ["vmexit_key_exit_seconds", "vmexit_key_exits"])
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "per-key series differ (above)"
serve_end || fail "vmexit serve --keys 1 exited with $? on SIGTERM"
kill -TERM "$S2"
wait "$S2" || fail "vmexit serve --keys 2 exited with $? on SIGTERM"
S2=
cat "$TMP/serve2.err" >>"$TMP/all-stderr"

# Guests that come and go: only IO exits traced (-r), each guest's keys (outs to 0xe9, ins from
# 0xe8, the done exit to 0xea: 3 as exits to the VMM, 3 more as guest IO exits where kvm_exit
# fires) fill --max-keys, so the next guest's fit only once an expired guest's (--keep 1s) have
# left the kernel's table. Two guests in turn: each one's series have its own keys, and no exit
# was lost as keys_full. (Kept, the second guest's would all go to other.)
MAXK=3
kvm_exit_fires "$OUT/vmexit-guest" && MAXK=6
serve_bg "$VMEXIT" serve --listen 127.0.0.1:0 --keys 5 -r io,IO_INSTRUCTION --max-keys $MAXK --keep 1s
[ -n "$URL" ] || { cat "$TMP/serve.err"; fail "vmexit serve --max-keys $MAXK --keep 1s did not start"; }
for g in 1 2; do
	"$OUT/vmexit-guest" --name "$NAME-t$g" --io 30 --in 20 >/dev/null 2>"$TMP/guest.err" ||
		{ cat "$TMP/guest.err"; fail "guest $g failed"; }
	# Its 30 + 20 + 1 IO exits in its own keys' series.
	for _ in $(seq 100); do
		curl -sf "$URL" >"$TMP/t$g.prom"
		n=$(grep -F "vmexit_key_exits_total{" "$TMP/t$g.prom" | grep -F "guest=\"$NAME-t$g\"" |
			grep -F 'reason="IO"' | grep -vF 'key="other"' | awk '{ n += $NF } END { print n + 0 }')
		[ "$n" = 51 ] && break
		sleep 0.1
	done
	[ "$n" = 51 ] || { grep -F "$NAME-t" "$TMP/t$g.prom"; grep keys_full "$TMP/t$g.prom"; fail "guest $g: $n IO exits under its own keys, expected 51"; }
	full=$(sed -n 's/^vmexit_lost_details_total{cause="keys_full"} //p' "$TMP/t$g.prom")
	[ "$full" = 0 ] || fail "guest $g: $full exits lost as keys_full"
	echo "ok: guest $g: 51 IO exits under its own keys, none lost as keys_full"
	[ $g = 2 ] && break
	# Its end is seen at a tick of the exporter (each sample, every SELF_SAMPLE_S = 5 s), its
	# series go --keep (1 s) later, and at the next tick its keys leave the kernel's table.
	for _ in $(seq 150); do
		curl -sf "$URL" | grep -qF "guest=\"$NAME-t$g\"" || break
		sleep 0.1
	done
	sleep 5.5
done
serve_end || fail "vmexit serve --max-keys $MAXK exited with $? on SIGTERM"
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: serve_keys_host"
