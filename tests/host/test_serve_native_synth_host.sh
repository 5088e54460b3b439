#!/bin/bash
# No KVM needed: serve's exporter over synthesized cells (tests/host/progs/serve_synth.c, through
# the sampler as the kernel's cells go) scraped over protobuf by a real Prometheus started with
# --enable-feature=native-histograms. Every exit's length is known by construction
# (tests/synth_cells.h's synth_lat, recomputed here), so each native bucket, classic bucket,
# count and sum must be exact in Prometheus; histogram_quantile(0.99) must fall in the native
# bucket (a factor of 2 at schema 0) of vmexit's own p99 (row_percentile). Then --max-series:
# the capped text scrape keeps its cap with whole rows, counts what it leaves out, says so once
# and passes promtool; the protobuf scrape of the same rows (2 series a row) fits whole.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_cmd prometheus prometheus
need_cmd promtool prometheus
need_cmd curl curl
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
SYNTH=$OUT/tests/serve_synth
[ -x "$SYNTH" ] || fail "$SYNTH not built (make tests)"

TMP=$(mktemp -d)
APID= BPID= PPID_PROM=
cleanup() {
	[ -n "$PPID_PROM" ] && kill "$PPID_PROM" 2>/dev/null
	[ -n "$APID" ] && kill "$APID" 2>/dev/null
	[ -n "$BPID" ] && kill "$BPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

GUESTS=3 VCPUS=2 REASONS=10 EXITS=1000 CAP=100
PB_ACCEPT='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3'

"$SYNTH" $GUESTS $VCPUS $REASONS $EXITS "$TMP/truth.txt" --histograms both 2>"$TMP/a.err" &
APID=$!
wait_said "$TMP/a.err" "listening on" $APID || { cat "$TMP/a.err"; fail "serve_synth did not start"; }
URL=$(grep -o 'http://[^ ]*/metrics' "$TMP/a.err")
ADDR=${URL#http://}
ADDR=${ADDR%/metrics}
"$SYNTH" $GUESTS $VCPUS $REASONS $EXITS "$TMP/truth_b.txt" --max-series $CAP 2>"$TMP/b.err" &
BPID=$!
wait_said "$TMP/b.err" "listening on" $BPID || { cat "$TMP/b.err"; fail "capped serve_synth did not start"; }
BURL=$(grep -o 'http://[^ ]*/metrics' "$TMP/b.err")

ct=$(curl -s -o "$TMP/a.pb" -w '%{content_type}' -H "Accept: $PB_ACCEPT" "$URL")
[ "$ct" = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited" ] ||
	fail "a protobuf Accept header got: $ct"
curl -s "$URL" >"$TMP/a.prom"
promtool check metrics <"$TMP/a.prom" || fail "promtool check metrics rejects the text scrape"

PPORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vmexit
    static_configs: [{targets: ['$ADDR']}]
YML
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--enable-feature=native-histograms \
	--web.listen-address=127.0.0.1:$PPORT --log.level=warn 2>"$TMP/prom.err" &
PPID_PROM=$!
for _ in $(seq 300); do
	curl -sf http://127.0.0.1:$PPORT/-/ready >/dev/null && break
	sleep 0.1
done
curl -sf http://127.0.0.1:$PPORT/-/ready >/dev/null || { cat "$TMP/prom.err"; fail "prometheus did not start"; }

$PY - "http://127.0.0.1:$PPORT" "$TMP/truth.txt" $GUESTS $VCPUS $REASONS $EXITS <<'PY'
import json, math, sys, time, urllib.parse, urllib.request
prom, truthf = sys.argv[1], sys.argv[2]
guests, vcpus, reasons, exits = map(int, sys.argv[3:])
TGID0 = 4100000
bad = []
def check(what, got, want, quiet=False):
    if not quiet or got != want:
        print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
def query(q):
    r = json.load(urllib.request.urlopen(prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=10))
    assert r["status"] == "success", r
    return r["data"]["result"]

# tests/synth_cells.h's definition, worked out again: cell i is guest i // (vcpus * reasons),
# reason i % reasons; its k-th exit lasts lat(i, k) ns.
def lat(i, k):
    if k == 0:
        return 0
    return 64 + ((k * 2654435761 + i * 40503) % (1 << (10 + i % 11))) // (1 + k % 4 * 7)
# Rows are guest x reason (no --by vcpu): the vCPUs' cells together. Reasons by label, as
# vmexit names them (the truth file's third column, in cell order).
truth = [l.split() for l in open(truthf)]
names = [(t[2], t[3]) for t in truth[:reasons]]
rows = {}
for i in range(guests * vcpus * reasons):
    key = (str(TGID0 + i // (vcpus * reasons)),) + names[i % reasons]
    rows.setdefault(key, []).extend(lat(i, k) for k in range(exits))
check("rows vmexit made", len(truth), len(rows))
p99_own = {(t[0], t[2], t[3]): int(t[5]) for t in truth}

for _ in range(100):
    if len(query("vmexit_exit_duration_nanoseconds")) == len(rows):
        break
    time.sleep(0.2)
else:
    print("FAILED: Prometheus never stored the native histograms"); sys.exit(1)

cnt = {(s["metric"]["pid"], s["metric"]["kind"], s["metric"]["reason"]): int(float(s["value"][1]))
       for s in query("histogram_count(vmexit_exit_duration_nanoseconds)")}
check("histogram_count() of every row = its exits", cnt, {k: len(v) for k, v in rows.items()}, quiet=True)
sums = {(s["metric"]["pid"], s["metric"]["kind"], s["metric"]["reason"]): float(s["value"][1])
        for s in query("histogram_sum(vmexit_exit_duration_nanoseconds)")}
check("histogram_sum() of every row = its exits' ns", sums, {k: float(sum(v)) for k, v in rows.items()}, quiet=True)
nat = {(s["metric"]["pid"], s["metric"]["kind"], s["metric"]["reason"]): s["histogram"][1]
       for s in query("vmexit_exit_duration_nanoseconds")}
cls = {}
for s in query("vmexit_exit_duration_seconds_bucket"):
    le = s["metric"]["le"]
    cls.setdefault((s["metric"]["pid"], s["metric"]["kind"], s["metric"]["reason"]), {})[
        math.inf if le == "+Inf" else round(float(le) * 1e9)] = int(float(s["value"][1]))
within = 0
for key, v in sorted(rows.items()):
    # Native, schema 0: the zero bucket [-1, 1] holds the 0 ns exits; bucket (2^(j-1), 2^j]
    # those of 2^(j-1) ns up to 2^j excluded (as the kernel's buckets close below).
    want = {}
    for x in v:
        b = (-1.0, 1.0) if x == 0 else (2.0 ** math.floor(math.log2(x)), 2.0 ** (math.floor(math.log2(x)) + 1))
        want[b] = want.get(b, 0) + 1
    got = {(float(b[1]), float(b[2])): int(float(b[3])) for b in nat[key]["buckets"]}
    check(f"{key}: native buckets", got, want, quiet=True)
    # Classic: le=2^e ns counts the exits shorter than 2^e ns.
    check(f"{key}: classic buckets",
          cls[key], {le: sum(1 for x in v if x < le) for le in cls[key]}, quiet=True)
    # The classic and native series agree at every classic bound.
    check(f"{key}: classic = native summed up to each bound",
          {le: c for le, c in cls[key].items() if le != math.inf},
          {le: sum(c for (lo, hi), c in got.items() if hi <= le) for le in cls[key] if le != math.inf},
          quiet=True)
    q = query(f'histogram_quantile(0.99, vmexit_exit_duration_nanoseconds{{pid="{key[0]}",kind="{key[1]}",reason="{key[2]}"}})')
    p99 = float(q[0]["value"][1])
    own = p99_own[key]
    e = math.floor(math.log2(own))
    ok = 2.0 ** e <= p99 <= 2.0 ** (e + 1)
    within += ok
    check(f"{key}: p99 Prometheus {p99:.0f} ns in the native bucket [{2 ** e}, {2 ** (e + 1)}] of vmexit's {own} ns", ok, True, quiet=True)
print(f"{len(rows)} rows of {2 * exits} exits: histogram_count() and histogram_sum() exact; native buckets, classic buckets and their agreement exact; p99 in its bucket for {within}")
t = json.load(urllib.request.urlopen(prom + "/api/v1/targets", timeout=10))["data"]["activeTargets"]
check("Prometheus target health", [(x["health"], x["lastError"]) for x in t], [("up", "")])
if bad:
    print("FAILED:", ", ".join(bad[:10])); sys.exit(1)
PY
[ $? -eq 0 ] || { cat "$TMP/prom.err"; fail "Prometheus's native histograms differ from the exits made (above)"; }

# --- the cap: guests x reasons rows; 28 series each in the text format (the exit counter, 24
# bounds, +Inf, _count, _sum), 2 over protobuf with native histograms (counter, histogram).
for _ in 1 2 3; do curl -s "$BURL" >"$TMP/capped.prom"; done
curl -s -H "Accept: $PB_ACCEPT" "$BURL" >"$TMP/capped.pb"
PYTHONPATH=$(dirname "$0") $PY - "$TMP/capped.prom" "$TMP/capped.pb" $CAP $((GUESTS * REASONS)) \
	<<'PY' || fail "--max-series (above)"
import re, sys
from prom_pb import families, gauge
text, pb = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
cap, nrows = int(sys.argv[3]), int(sys.argv[4])
fams = families(pb)
bad = []
def check(what, got, want):
    print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
per_guest = re.findall(rb"^vmexit_(?:exits_total|exit_duration_seconds_\w+|exit_state_\w+|key_\w+|exits?_in_flight\w*)[{ ]", text, re.M)
check("per-guest series in the text scrape <= --max-series", len(per_guest) <= cap, True)
check("text rows kept: the whole rows of 28 the cap holds", text.count(b"\nvmexit_exits_total{"), cap // 28)
check("vmexit_series_dropped (text): the other rows' series",
      float(re.search(rb"^vmexit_series_dropped (\S+)$", text, re.M).group(1)), float((nrows - cap // 28) * 28))
check("vmexit_series_max", re.search(rb"^vmexit_series_max (\S+)$", text, re.M).group(1), str(cap).encode())
check("protobuf rows (2 series each: all fit)", len(fams["vmexit_exits_total"]), nrows)
check("protobuf native histograms", len(fams["vmexit_exit_duration_nanoseconds"]), nrows)
check("no classic family in a native-only protobuf scrape", "vmexit_exit_duration_seconds" in fams, False)
check("vmexit_series_dropped (protobuf)", gauge(fams["vmexit_series_dropped"][0]), 0.0)
if bad:
    print("FAILED:", ", ".join(bad)); sys.exit(1)
PY
promtool check metrics <"$TMP/capped.prom" || fail "promtool check metrics rejects the capped scrape"
n=$(grep -c 'max-series' "$TMP/b.err")
[ "$n" = 1 ] || { cat "$TMP/b.err"; fail "the cap was said $n times in the log over 3 capped scrapes, not once"; }
echo "PASS: native histograms exact in Prometheus; --max-series keeps its cap"
