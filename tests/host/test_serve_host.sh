#!/bin/bash
# Real kernel, this host: `vmexit serve` scraped by a real Prometheus server (1 s interval) while
# the bundled guest makes a known number of exits. Prometheus's query API must return exactly the
# guest's own tally; both formats must parse (promtool for the text format, the strict
# OpenMetrics parser of python3-prometheus-client and Prometheus itself, which asks for
# OpenMetrics first); bad requests get clear answers and do not hurt scrapes (a 1 MB header, 1,000
# idle connections, 600 clients trickling their headers); keep-alive and pipelining work; --keep
# (also after frequent scrapes), SIGHUP, SIGTERM and --pidfile do what they say; responses are
# gzipped when the client asks. $1: the build directory (the ASan build in `make test`).
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd prometheus prometheus
need_cmd promtool prometheus
need_cmd curl curl
# Debian's python3, which has the prometheus_client package (not a pyenv shim's).
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
$PY -c 'import prometheus_client' 2>/dev/null ||
	fail "python3-prometheus-client not installed (tools/install-deps.sh installs it)"

TMP=$(mktemp -d)
VMEXIT=$OUT/vmexit
SPID= PPID_PROM=
cleanup() {
	[ -n "$PPID_PROM" ] && kill "$PPID_PROM" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

VCPUS=2 IO=2000 MMIO=500 HLT=200 KEEP=8 NAME=promtest-$$
[ -x "$OUT/tests/test_prom_exposition" ] || fail "$OUT/tests/test_prom_exposition not built (make tests)"
# Whether kernel rows must appear, and with which isa: from the kernel (lib.sh's probe and the
# loaded KVM module), never from what Prometheus shows.
KISA=none
if kvm_exit_fires "$OUT/vmexit-guest"; then
	if [ -d /sys/module/kvm_amd ]; then KISA=svm
	elif [ -d /sys/module/kvm_intel ]; then KISA=vmx
	else KISA=other
	fi
fi
PROM_ACCEPT='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'

# --- the exporter, on a free port of the loopback
TEST_START=$(date +%s.%N)
serve_bg "$VMEXIT" serve --listen 127.0.0.1:0 --keep ${KEEP}s --pidfile "$TMP/serve.pid"
cat "$TMP/serve.err"
[ -n "$URL" ] || fail "vmexit serve did not start (see above)"
ADDR=${URL#http://}
ADDR=${ADDR%/metrics}
PORT=${ADDR##*:}
[ "$(cat "$TMP/serve.pid")" = "$SPID" ] || fail "--pidfile does not hold the server's pid"

# --- Prometheus, scraping it every second
PPORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vmexit
    static_configs: [{targets: ['$ADDR']}]
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address=127.0.0.1:$PPORT --log.level=warn 2>"$TMP/prom.err" &
PPID_PROM=$!
for _ in $(seq 300); do
	curl -sf http://127.0.0.1:$PPORT/-/ready >/dev/null && break
	sleep 0.1
done
curl -sf http://127.0.0.1:$PPORT/-/ready >/dev/null || { cat "$TMP/prom.err"; fail "prometheus did not start"; }

# --- the workload: `vmexit stat` runs it, for the exits' observed min and max
chk "$VMEXIT" stat --json -- "$OUT/vmexit-guest" --vcpus $VCPUS --io $IO --mmio $MMIO \
	--hlt $HLT --name $NAME >"$TMP/stat.json" || fail "vmexit stat (the workload) failed"
GUEST_END=$(date +%s.%N)
# Within --keep, the exited guest's series are still there.
curl -sf "$URL" >"$TMP/after_end.txt" || fail "scrape after the guest ended failed"
grep -q "guest=\"$NAME\"" "$TMP/after_end.txt" || fail "guest's series gone right after it ended"

# --- what Prometheus stored
$PY - "http://127.0.0.1:$PPORT" "$TMP/stat.json" "$NAME" "$GUEST_END" $KISA $VCPUS $IO $MMIO $HLT <<'PY'
import json, math, sys, time, urllib.parse, urllib.request
prom, statf, name, end, kisa = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
vcpus, io, mmio, hlt = map(int, sys.argv[6:])
bad = []
def check(what, got, want):
    print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
at = None    # evaluation time: the final scrape's, once found (later ones may have dropped the guest)
def query(q):
    args = {"query": q} if at is None else {"query": q, "time": f"{at:.3f}"}
    url = prom + "/api/v1/query?" + urllib.parse.urlencode(args)
    r = json.load(urllib.request.urlopen(url, timeout=10))
    assert r["status"] == "success", r
    return r["data"]["result"]
def by(q, label):
    return {s["metric"].get(label, ""): float(s["value"][1]) for s in query(q)}

# Wait for a scrape taken well after the guest ended: its counts are final then. Every query
# below is evaluated at that scrape's time: on a slow machine --keep may run out before they
# are done, and the guest's series are stale at "now" from then on.
sel = f'guest="{name}"'
for _ in range(300):
    r = query(f"max(timestamp(vmexit_exits_total{{{sel}}}))")
    if r and float(r[0]["value"][1]) > end + 1.5:
        at = float(r[0]["value"][1])
        break
    time.sleep(0.1)
else:
    print("FAILED: Prometheus never scraped the guest's final counts"); sys.exit(1)

stat = [json.loads(l) for l in open(statf) if l.strip()][-1]
urows = [r for r in stat["rows"] if r["guest"] == name and r["isa"] == "user"]
pids = {r["pid"] for r in urows}
check("the guest is one process", len(pids), 1)
pid = str(pids.pop())
# Each vCPU makes io + 1 port writes; the last one says "done" and never re-enters.
check("vmexit_exits_total by reason (user)",
      by(f'sum by (reason) (vmexit_exits_total{{{sel},kind="user",isa="user",pid="{pid}"}})', "reason"),
      {"IO": vcpus * (io + 1), "MMIO": vcpus * mmio, "HLT": vcpus * hlt})
check("vmexit_exit_duration_seconds_count by reason (user)",
      by(f'sum by (reason) (vmexit_exit_duration_seconds_count{{{sel},kind="user",pid="{pid}"}})', "reason"),
      {"IO": vcpus * io, "MMIO": vcpus * mmio, "HLT": vcpus * hlt})
check("+Inf bucket = _count",
      by(f'sum by (reason) (vmexit_exit_duration_seconds_bucket{{{sel},kind="user",le="+Inf"}})', "reason"),
      by(f'sum by (reason) (vmexit_exit_duration_seconds_count{{{sel},kind="user"}})', "reason"))
# Where kvm:kvm_exit fires (lib.sh's kvm_exit_fires, before the run), the guest's kernel exits
# are there too, under the loaded module's isa: every `out` and `hlt` is one exact kernel exit.
kern = by(f'sum by (isa, reason) (vmexit_exits_total{{{sel},kind="kernel"}})', "reason")
isas = set(by(f'count by (isa) (vmexit_exits_total{{{sel},kind="kernel"}})', "isa"))
print(f"kernel rows: {kern or 'none'} (kvm_exit fires here: {'no' if kisa == 'none' else kisa})")
want_kernel = {"svm": {"io": vcpus * (io + 1), "hlt": vcpus * hlt},
               "vmx": {"IO_INSTRUCTION": vcpus * (io + 1), "HLT": vcpus * hlt}}
if kisa == "none":
    check("kernel series where kvm_exit does not fire", kern, {})
else:
    check("kernel series isa", isas, {kisa})
    for reason, n in want_kernel.get(kisa, {}).items():
        check(f"kernel {kisa} {reason}", kern.get(reason), n)
check("no counter ever went backwards",
      [s["value"][1] for s in query(f"resets(vmexit_exits_total{{{sel}}}[5m]) > 0")] +
      [s["value"][1] for s in query(f"resets(vmexit_exit_duration_seconds_count{{{sel}}}[5m]) > 0")], [])

# p99 from the buckets: finite, and inside the bounds of the buckets holding the observed
# min and max (interpolation inside a bucket can pass the max itself, never its bucket).
bounds = [256e-9 * 2 ** i for i in range(24)]
io_rows = [r for r in urows if r["reason_name"] == "IO" and r["completed"]]
lo_ns, hi_ns = min(r["min_ns"] for r in io_rows), max(r["max_ns"] for r in io_rows)
q = query(f'histogram_quantile(0.99, sum by (le) (vmexit_exit_duration_seconds_bucket{{{sel},kind="user",reason="IO"}}))')
p99 = float(q[0]["value"][1]) if q else float("nan")
lo = max([b for b in bounds if b <= lo_ns / 1e9], default=0.0)
hi = min([b for b in bounds if b > hi_ns / 1e9], default=bounds[-1])
print(f"IO p99 {p99 * 1e9:.0f} ns; observed min {lo_ns} ns, max {hi_ns} ns; their buckets [{lo * 1e9:.0f}, {hi * 1e9:.0f}] ns")
check("histogram_quantile(0.99) finite and within the buckets of min and max",
      math.isfinite(p99) and lo <= p99 <= hi, True)

t = json.load(urllib.request.urlopen(prom + "/api/v1/targets", timeout=10))["data"]["activeTargets"]
check("Prometheus target health (it asks for OpenMetrics first)",
      [(x["health"], x["lastError"]) for x in t], [("up", "")])
if bad:
    print("FAILED:", ", ".join(bad)); sys.exit(1)
PY
[ $? -eq 0 ] || { cat "$TMP/prom.err"; fail "Prometheus's view differs from the guest's tally (above)"; }

# --- both formats
ctype() { curl -s -o "$2" -w '%{content_type}' -H "Accept: $1" "$URL"; }
ct=$(ctype "" "$TMP/text.prom")
[ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "text format content type: $ct"
promtool check metrics <"$TMP/text.prom" || fail "promtool check metrics rejects the text format"
ct=$(ctype "$PROM_ACCEPT" "$TMP/om.prom")
[ "$ct" = "application/openmetrics-text; version=1.0.0; charset=utf-8" ] ||
	fail "Prometheus's Accept header did not get OpenMetrics: $ct"
# promtool 2.42's check metrics reads only the text format; the strict OpenMetrics parser:
$PY - "$TMP/om.prom" <<'PY' || fail "the OpenMetrics exposition does not parse"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))
print(f"OpenMetrics: {len(fams)} families, {sum(len(f.samples) for f in fams)} samples parsed")
PY
tail -1 "$TMP/om.prom" | grep -qx '# EOF' || fail "OpenMetrics exposition does not end with # EOF"
# gzip when asked, as Prometheus does: curl --compressed, and python's urllib with its own
# gzip module; the same families as a plain scrape taken just before (other VMs on the host
# may come and go in between), the exit and lost counters the same (the pair taken again while
# they move), in both formats; no
# gzip unless asked (q=0 refuses it).
hdr=$(curl -s --compressed -D - -o "$TMP/gz.prom" "$URL" | tr -d '\r')
grep -qix 'content-encoding: gzip' <<<"$hdr" || fail "curl --compressed did not get gzip: $hdr"
promtool check metrics <"$TMP/gz.prom" || fail "promtool check metrics rejects the gzipped scrape"
hdr=$(curl -s -H 'Accept-Encoding: gzip;q=0, identity' -D - -o /dev/null "$URL" | tr -d '\r')
! grep -qi '^content-encoding' <<<"$hdr" || fail "gzip;q=0 got gzip: $hdr"
$PY - "$URL" "$NAME" "$PROM_ACCEPT" <<'PY' || fail "gzip scrapes (above)"
import gzip, re, sys, time, urllib.request
from prometheus_client.openmetrics.parser import text_string_to_metric_families
url, name, om = sys.argv[1:]
def get(accept, enc):
    h = {"Accept": accept}
    if enc:
        h["Accept-Encoding"] = enc
    r = urllib.request.urlopen(urllib.request.Request(url, headers=h), timeout=10)
    body = r.read()
    return r.headers.get("Content-Encoding"), len(body), body
def families(t):
    return {l for l in t.splitlines() if l.startswith("# TYPE ")}
def guest(t):
    # The exit and lost counters (gauges such as an in-flight age move between two scrapes);
    # of every guest: the ended one's may be past --keep already on a slow machine (the bed).
    return sorted(l for l in t.splitlines() if
                  re.match(r"vmexit_(exits|exit_duration_seconds|lost_exits)_"
                           r"(total|count|sum|bucket|created)\{", l))
for accept in ("", om):
    # Two scrapes, not one answer twice: where the guest's last exits were still being
    # accounted for (its threads' ends, noticed by serve's upkeep) the pair is taken again.
    for attempt in range(5):
        _, plain_len, plain = get(accept, None)
        enc, gz_len, gz = get(accept, "gzip")
        assert enc == "gzip", f"Content-Encoding {enc}"
        text = gzip.decompress(gz).decode()
        if guest(text) == guest(plain.decode()):
            break
        print("the pair differs:", sorted(set(guest(text)) ^ set(guest(plain.decode())))[:6])
        time.sleep(1)
    print(f"Accept '{accept[:30]}': {plain_len} bytes plain, {gz_len} gzipped, {len(text)} inflated")
    assert families(text) == families(plain.decode()), "gzipped and plain: other families"
    assert guest(text) and guest(text) == guest(plain.decode()), "gzipped and plain: other counts"
    if accept:
        fams = list(text_string_to_metric_families(text))
        print(f"  gzipped OpenMetrics: {len(fams)} families parsed")
PY
# The exporter's own metrics, against what the kernel says of its process now.
curl -sf "$URL" >"$TMP/self.prom" || fail "scrape failed"
$PY - "$TMP/self.prom" $SPID "$(date +%s.%N)" "$TEST_START" <<'PY' || fail "process_* / vmexit_sample_* (above)"
import os, sys
text, pid, now, started = open(sys.argv[1]).read(), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
v = {l.split()[0]: float(l.split()[1]) for l in text.splitlines() if l and l[0] != "#" and "{" not in l}
status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
rss = int(status["VmRSS"].split()[0]) * 1024
fds = len(os.listdir(f"/proc/{pid}/fd"))
checks = [
    ("process_start_time_seconds between the test's start and now",
     started - 1 <= v["process_start_time_seconds"] <= now),
    ("vmexit_last_sample_timestamp_seconds within 5 s of now",
     abs(v["vmexit_last_sample_timestamp_seconds"] - now) < 5),
    ("vmexit_sample_duration_seconds in (0, 1)", 0 < v["vmexit_sample_duration_seconds"] < 1),
    ("process_resident_memory_bytes within 25 % of VmRSS", abs(v["process_resident_memory_bytes"] - rss) < rss / 4),
    ("process_open_fds within 4 of /proc/PID/fd", abs(v["process_open_fds"] - fds) <= 4),
    ("process_cpu_seconds_total > 0", v["process_cpu_seconds_total"] > 0),
    ("process_max_fds > process_open_fds", v["process_max_fds"] > v["process_open_fds"]),
]
for what, ok in checks:
    print(f"{what}: {'ok' if ok else 'NO'}")
sys.exit(0 if all(ok for _, ok in checks) else 1)
PY
# The exposition of synthetic rows with every escape (quotes, backslashes, newlines, bad UTF-8).
chk "$OUT/tests/test_prom_exposition" "$TMP" >/dev/null || fail "test_prom_exposition"
promtool check metrics <"$TMP/text.prom" || fail "promtool rejects the escaped exposition"
$PY -c 'import sys; from prometheus_client.openmetrics.parser import text_string_to_metric_families as p; list(p(open(sys.argv[1]).read()))' \
	"$TMP/openmetrics.prom" || fail "the escaped OpenMetrics exposition does not parse"


# --- stuck exits: the VMM sleeps 2.5 s in each of its 2 IO exits per vCPU, so while it runs each
# vCPU has one IO exit to the VMM in flight past --stuck (default 1 s) for 1.5 s of each 2.5 (a
# loaded bed's scrape can take longer than the 0.5 s a 1.5 s sleep left); where kvm_exit fires, the
# guest exit that led to it is in flight as long (it ends at the next entry). None is left once
# the guest has exited.
SNAME=stuck-$$
"$OUT/vmexit-guest" --vcpus 2 --io 2 --io-sleep-us 2500000 --name $SNAME 2>/dev/null &
gpid=$!
for _ in $(seq 100); do
	curl -sf "$URL" >"$TMP/stuck.txt" || fail "scrape during the stuck guest failed"
	[ "$(grep -c "^vmexit_exits_in_flight{guest=\"$SNAME\".*kind=\"user\"" "$TMP/stuck.txt")" = 2 ] &&
		break
	sleep 0.1
done
wait $gpid || fail "the stuck guest failed"
$PY - "$TMP/stuck.txt" "$SNAME" $gpid $KISA <<'PY' || fail "stuck exits (above)"
import re, sys
text, name, pid, kisa = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
def series(metric):
    out = {}
    for labels, v in re.findall(metric + r'\{([^}]*)\} (\S+)', text):
        l = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if l["guest"] == name:
            out[(l["kind"], l["vcpu"])] = (l["pid"], l["reason"], float(v))
    return out
n, secs = series("vmexit_exits_in_flight"), series("vmexit_exit_in_flight_seconds")
print(f"in flight: {n}\nseconds: {secs}")
reason = {"none": None, "svm": "io", "vmx": "IO_INSTRUCTION"}.get(kisa, "?")
want = {("user", v): (pid, "IO") for v in "01"}
if reason:
    want.update({("kernel", v): (pid, reason) for v in "01"})
ok = {k: x[:2] for k, x in n.items()} == want and all(x[2] == 1.0 for x in n.values()) and \
     {k: x[:2] for k, x in secs.items()} == want and all(1.0 <= x[2] < 4.0 for x in secs.values())
sys.exit(0 if ok else 1)
PY
curl -sf "$URL" >"$TMP/unstuck.txt" || fail "scrape failed"
! grep -q "^vmexit_exit.*in_flight.*guest=\"$SNAME\"" "$TMP/unstuck.txt" ||
	fail "exits of the ended stuck guest still reported in flight"

# --- concurrent scrapes of final counts agree
cpids=()
for i in 1 2 3 4; do
	curl -sf "$URL" -o "$TMP/c$i.txt" &
	cpids+=($!)
done
wait "${cpids[@]}" || fail "a concurrent scrape failed"
for i in 2 3 4; do
	cmp -s <(grep "guest=\"$NAME\"" "$TMP/c1.txt") <(grep "guest=\"$NAME\"" "$TMP/c$i.txt") ||
		fail "concurrent scrapes disagree on the ended guest's counts"
done

# --- bad input
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "http://$ADDR/nope")" = 404 ] || fail "unknown path: not 404"
[ "$(code -X POST -d x "$URL")" = 405 ] || fail "POST: not 405"
[ "$(code "http://$ADDR/")" = 200 ] || fail "GET /: not 200"
$PY - "$ADDR" <<'PY' || fail "huge header / idle connections / keep-alive / slowloris (above)"
import http.client, socket, sys, time, urllib.request
host, port = sys.argv[1].rsplit(":", 1)
port = int(port)
def scrape(timeout):
    t = time.time()
    body = urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=timeout).read()
    assert b"vmexit_build_info" in body
    return time.time() - t
s = socket.create_connection((host, port))
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
except (BrokenPipeError, ConnectionResetError):
    pass	# answered and closed before the whole header was sent
status = s.recv(64).split(b"\r\n")[0].decode()
print(f"1 MB header: {status}")
assert status.startswith("HTTP/1.1 431"), status
s.close()
# 1,000 clients that connect and say nothing (more than the 512 connections).
idle = []
for _ in range(1000):
    c = socket.socket()
    c.setblocking(False)
    c.connect_ex((host, port))
    idle.append(c)
time.sleep(0.5)
print(f"scrape with 1,000 idle connections open: {scrape(2):.3f} s")
for c in idle:
    c.close()
# Keep-alive, as Prometheus uses it: three scrapes on one connection.
conn = http.client.HTTPConnection(host, port, timeout=5)
socks = set()
for _ in range(3):
    conn.request("GET", "/metrics")
    r = conn.getresponse()
    assert r.status == 200 and b"vmexit_build_info" in r.read(), r.status
    socks.add(id(conn.sock))
    assert conn.sock is not None, "the server closed the connection"
print(f"keep-alive: 3 scrapes on {len(socks)} connection(s)")
assert len(socks) == 1
conn.close()
# 20 pipelined GETs in one write: 20 answers.
s = socket.create_connection((host, port))
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 19 +
          b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
s.settimeout(10)
data = b""
while True:
    d = s.recv(1 << 16)
    if not d:
        break
    data += d
s.close()
print(f"20 pipelined GETs: {data.count(b'HTTP/1.1 200 OK')} answers")
assert data.count(b"HTTP/1.1 200 OK") == 20 and data.count(b"vmexit_build_info{") == 20
# Slowloris: 600 clients trickle a header byte each second, coming back when cut, for 8 s;
# a scrape every 0.5 s is answered within 2 s all the same.
def attacker():
    c = socket.socket()
    c.setblocking(False)
    c.connect_ex((host, port))
    return [c, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "]
att = [attacker() for _ in range(600)]
t0, next_byte, worst, scrapes, cut = time.time(), 0, 0.0, 0, 0
while time.time() - t0 < 8:
    if time.time() >= next_byte:
        next_byte = time.time() + 1
        for i, a in enumerate(att):
            try:
                if a[1] is None:
                    a[0].send(b"a")
                elif a[0].send(a[1]):
                    a[1] = None
                if a[0].recv(1) == b"":
                    raise ConnectionResetError
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                a[0].close()
                att[i] = attacker()
                cut += 1
    worst = max(worst, scrape(2))
    scrapes += 1
    time.sleep(0.5)
print(f"slowloris, 600 clients at a byte per second, {cut} reconnects: {scrapes} scrapes "
      f"answered, the slowest in {worst:.3f} s")
for a in att:
    a[0].close()
PY
# --- a pid reused by a VMM whose name differs only in a byte that is not UTF-8: both names export
# as guest="bad\uFFFD" on the same pid, so the later VMM's series must replace the ended one's,
# never sit beside them with the same labels. The pid is handed on through ns_last_pid.
$PY - "$URL" "$OUT/vmexit-guest" <<'PY' || fail "series after pid reuse (above)"
import collections, os, re, subprocess, sys, time, urllib.request
url, guest = sys.argv[1], sys.argv[2]
def scrape():
    return urllib.request.urlopen(url, timeout=10).read().decode()
def vm(name, *extra):	# the guest reads its name from the first guest=, vmexit the last (QEMU)
    return subprocess.Popen([guest, "--io", "20", *extra, b"-name", b"guest=ok,guest=" + name],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
a = vm(b"bad\xff")
assert a.wait() == 0
scrape()	# serve notes A's end
# Other processes on the host may take the pid first: try again until B gets it.
for attempt in range(100):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(a.pid - 1))
    b = vm(b"bad\xfe", "--linger", "0.5")
    if b.pid == a.pid:
        break
    b.kill()
    b.wait()
else:
    print(f"FAILED: pid {a.pid} was never free for the second VMM (100 tries)"); sys.exit(1)
assert b.wait() == 0
text = scrape()
series = collections.Counter(l.rsplit(" ", 1)[0] for l in text.splitlines()
                             if l and not l.startswith("#"))
dups = [s for s, n in series.items() if n > 1]
mine = {s: v for s, v in re.findall(r'^(vmexit_exits_total\{guest="bad\ufffd",pid="%d"[^}]*'
                                    r'kind="user"[^}]*reason="IO"\}) (\d+)$' % b.pid, text, re.M)}
print(f"pid {b.pid} reused after {attempt} tries: {len(dups)} duplicate series; {mine}")
# B's own IO exits only (one vCPU: 20 + the last "done" write), once.
sys.exit(0 if not dups and list(mine.values()) == ["21"] else 1)
PY

out=$("$VMEXIT" serve --listen garbage 2>&1); rc=$?
echo "--listen garbage: exit $rc: $out"
[ $rc -eq 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && [[ $out == *"--listen 'garbage'"* ]] ||
	fail "--listen garbage: want one line naming it and exit 2"
out=$(timeout 10 "$VMEXIT" serve --listen "$ADDR" 2>&1); rc=$?
echo "port in use: exit $rc: $out"
[ $rc -eq 1 ] && [[ $out == *"Address already in use"* ]] || fail "port in use: want exit 1 saying so"
kill -0 $SPID || fail "vmexit serve died"

# --- upkeep under frequent scrapes: its own clock. Three guests end after a stretch of scrapes 4
# per second, then nobody scrapes: serve's own sample must notice their end (within 5 s), and
# --keep later their series are gone. (Each scrape once pushed that sample 5 s further out: it
# never came, and the next scrape found the guests just ended.)
kill "$PPID_PROM"
wait "$PPID_PROM" 2>/dev/null
PPID_PROM=
upids=()
for i in 1 2 3; do
	"$OUT/vmexit-guest" --io 50 --linger 6 --name upkeep$i-$$ >/dev/null 2>&1 &
	upids+=($!)
done
for _ in $(seq 18); do
	curl -sf "$URL" >"$TMP/upkeep.txt" || fail "scrape failed"
	sleep 0.25
done
for i in 1 2 3; do
	grep -q "guest=\"upkeep$i-$$\"" "$TMP/upkeep.txt" || fail "guest upkeep$i-$$ not exported"
done
wait "${upids[@]}" || fail "a guest failed"
sleep $((KEEP + 5 + 2))
curl -sf "$URL" >"$TMP/upkeep.txt" || fail "scrape failed"
! grep -q "guest=\"upkeep[123]-$$\"" "$TMP/upkeep.txt" ||
	fail "guests that ended after frequent scrapes outlived --keep ${KEEP}s: no upkeep"

# --- --keep: the ended guest's series go once it has been gone for longer; serve notices an
# exit at its next scrape or its own sample (every 5 s), whichever comes first.
now=$(date +%s.%N)
sleep "$($PY -c "print(max(0.0, $GUEST_END + $KEEP + 5 + 1.5 - $now))")"
curl -sf "$URL" >"$TMP/later.txt" || fail "scrape failed"
! grep -q "guest=\"$NAME\"" "$TMP/later.txt" || fail "the guest's series outlived --keep ${KEEP}s"

# --- signals
kill -HUP $SPID
sleep 0.5
kill -0 $SPID 2>/dev/null || fail "SIGHUP stopped vmexit serve"
[ "$(code "$URL")" = 200 ] || fail "no scrape after SIGHUP"
signal_ends TERM $SPID 5 "vmexit serve"
SPID=
cat "$TMP/serve.err" >>"$TMP/all-stderr"
[ $rc -eq 0 ] || { cat "$TMP/serve.err"; fail "vmexit serve exited with $rc on SIGTERM"; }
[ ! -e "$TMP/serve.pid" ] || fail "--pidfile left behind"
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: test_serve_host"
