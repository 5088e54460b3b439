#!/bin/bash
# A real QEMU on this host (SeaBIOS alone makes hundreds of port exits): `stat --by key --qmp
# auto` counts each port's exits to the VMM exactly as ftrace's kvm_pio of the same run, and
# names each busy port as QEMU's own `info mtree -f` does. The windows match: the tracefs
# instance is on before vmexit starts QEMU and off after QEMU quit, and the guest is paused
# (QMP stop) before it quits, so that no IO exit is left in flight. Then `top -x --keys --qmp
# auto` on a running QEMU names its keys as that QEMU's map does.
# In the nested SVM bed (tests/vm/test_nested_host.sh) too, with QEMU and SeaBIOS carried in
# (tests/vm/lib/qemu_files.sh): there kvm_exit fires, and the kernel's IO rows are checked as well.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd python3 python3
need_cmd qemu-system-x86_64 qemu-system-x86
host_binaries "$OUT"
TMP=$(mktemp -d)
TR=/sys/kernel/tracing/instances/vmexit-qmp-$$
VPID= QPID=
cleanup() {
	[ -n "$VPID" ] && kill "$VPID" 2>/dev/null
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null
	[ -d "$TR" ] && { echo 0 >"$TR/tracing_on"; rmdir "$TR"; }
	rm -rf "$TMP"
}
trap cleanup EXIT
# qmp_asked ERRFILE: vmexit (run with -v) got QEMU's map. A QEMU still starting may miss the
# first ask: its note is then followed by the note of a later ask's answer, for the same pid.
qmp_asked() {
	local pid n="^vmexit: note: --qmp: guest .* (pid"
	for pid in $(sed -n "s/$n \\([0-9]*\\)): .*keep built-in names\$/\\1/p" "$1"); do
		grep -q "$n $pid): QMP at .* answered a later ask;" "$1" || return 1
	done
	grep "^vmexit: --qmp: guest .*: QEMU's map from " "$1" || return 1
	grep -c "answered a later ask" "$1" | sed 's/^/QMP asks answered late: /'
	return 0
}
# wait_answered ERRFILE: vmexit (run with -v) said a map from QEMU. A QEMU busy starting may
# miss vmexit's first ask (a note), and vmexit asks again 2, 4, 8... s later; nor is an ask
# begun one answered: the test's quit can come first (a CI bed run: record's first ask, begun
# before the test quit QEMU, read "no such socket" on its second path). Waits (at most 60 s)
# for the map before the phase ends, so that the names checked below are QEMU's; qmp_asked
# says what is missing when it never comes.
wait_answered() {
	local i
	for i in $(seq 300); do
		grep -q "^vmexit: --qmp: guest .*: QEMU's map from " "$1" && return 0
		sleep 0.2
	done
}
# seabios_at QPID ACCESS WHAT: waits (at most 120 s) until QEMU QPID's guest made ACCESS ("pio_read
# at 0x1f7"), as ftrace's kvm_pio in the test's tracefs instance shows it: SeaBIOS's stages come
# well under a second apart natively, seconds apart in the nested bed (KVM over TCG), so no fixed
# sleep fits both.
seabios_at() {
	local i
	for i in $(seq 600); do
		grep -qE "\( *$1\) .* kvm_pio: $2 " "$TR/trace" && return 0
		sleep 0.2
	done
	fail "QEMU $1: SeaBIOS did not reach $3 ($2) in 120 s"
}
# Past its banner on the VGA text console: probing the ATA controllers.
seabios_past_vga() { seabios_at "$1" "pio_read at 0x1f7" "the ATA probe"; }
# The test's own QMP questions (SOCKET MTREE-FILE): the flat views into the file, then stop (vCPUs
# out of KVM_RUN, every IO exit completed) and quit.
cat >"$TMP/ask.py" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rw")
json.loads(f.readline())
def ask(cmd, **args):
    f.write(json.dumps({"execute": cmd, "arguments": args} if args else {"execute": cmd}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "event" not in r:
            if "error" in r:
                sys.exit(f"{cmd}: {r['error']}")
            return r["return"]
ask("qmp_capabilities")
open(sys.argv[2], "w").write(ask("human-monitor-command", **{"command-line": "info mtree -f"}))
ask("stop")
ask("quit")
PY
# QEMU's I/O (or memory) flat view as `info mtree -f` prints it, read the test's own way (not
# vmexit's): [(lo, hi, name, is_root)], root; the root region's own ranges are no device.
cat >"$TMP/mtree_io.py" <<'PY'
import re
def io_view(path, space="I/O"):
    io, cur, root = [], None, None
    for line in open(path).read().splitlines():
        line = line.rstrip("\r")
        if line.startswith("FlatView"):
            cur = None
        elif line.startswith(f' AS "{space}"'):
            cur = "io"
        elif line.startswith(" Root memory region: "):
            root = line.split(": ", 1)[1]
        elif cur == "io" and line.startswith("  "):
            r = re.match(r"\s+([0-9a-f]+)-([0-9a-f]+) \(prio [-0-9]+, [^)]*\): (.*?)( @[0-9a-f]+)?( KVM)?$", line)
            if r:
                io.append((int(r.group(1), 16), int(r.group(2), 16), r.group(3), r.group(3) == root))
    return io, root
PY

# Bad sockets (--qmp PATH): a note each, the counts exact, no wait past the ask's 500 ms. The
# guest lingers so that vmexit sees it running and asks. The silent one again with
# --qmp-timeout 150ms: its note names that time, and --qmp-timeout as the fix. Each run costs
# a vmexit start (4-6 s in the bed): the other ways an ask fails (not a socket, a server that
# closes mid-answer, an error reply) are test_qmp's, against its fake QEMU.
python3 - "$TMP" <<'PY' &
import os, socket, sys, time
d = sys.argv[1]
socks = {}
for mode in ("silent", "garbage"):
    s = socket.socket(socket.AF_UNIX)
    s.bind(f"{d}/{mode}.qmp")
    s.listen(8)
    socks[mode] = s
open(f"{d}/fake.ready", "w").close()
end = time.time() + 60
while time.time() < end and not os.path.exists(f"{d}/fake.done"):
    for mode, s in socks.items():
        if mode == "silent":
            continue	# accepts nothing: a QMP another client holds
        s.settimeout(0.05)
        try:
            c, _ = s.accept()
        except socket.timeout:
            continue
        c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
        c.close()
PY
FPID=$!
for _ in $(seq 50); do [ -e "$TMP/fake.ready" ] && break; sleep 0.1; done
for q in "$TMP/none.qmp" "$TMP/silent.qmp" "$TMP/garbage.qmp" "$TMP/silent.qmp --qmp-timeout 150ms"; do
	t0=$(date +%s%N)
	# shellcheck disable=SC2086 # $q: a path, or a path and --qmp-timeout
	"$VMEXIT" stat --by key --qmp $q --json -- "$GUEST" --io 300 --linger 0.5 \
		>"$TMP/bad.out" 2>"$TMP/bad.err" || { cat "$TMP/bad.err"; fail "--qmp $q: exit $?"; }
	ms=$((($(date +%s%N) - t0) / 1000000))
	grep -q "^vmexit: note: --qmp: guest .*QMP at ${q%% *}: .*keep built-in names$" \
		"$TMP/bad.err" || { cat "$TMP/bad.err"; fail "--qmp $q: no note"; }
	case $q in
	*silent.qmp) want="no answer within 500 ms (--qmp-timeout gives it longer)" ;;
	*150ms) want="no answer within 150 ms (--qmp-timeout gives it longer)" ;;
	*) want= ;;
	esac
	[ -z "$want" ] || grep -qF "$want" "$TMP/bad.err" ||
		{ cat "$TMP/bad.err"; fail "--qmp $q: the note does not say '$want'"; }
	[ "$(grep -c "note: --qmp" "$TMP/bad.err")" = 1 ] || fail "--qmp $q: more than one note"
	python3 -c '
import json, sys
j = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
n = sum(r["count"] for r in j["rows"] if r["kind"] == "user" and r["key_kind"] == "port"
        and r["key"] == 0xe9 and r["key_dir"] == "out" and r["key_name"] == "debugcon")
sys.exit(0 if n == 300 else f"0xe9 out debugcon: {n} exits, expected 300")' "$TMP/bad.out" ||
		fail "--qmp $q: counts changed"
	echo "ok: --qmp $q: $(grep -o 'QMP at .*' "$TMP/bad.err" | cut -c1-90), 300 exits, ${ms} ms"
done
touch "$TMP/fake.done"
wait $FPID
echo "time: bad sockets done at ${SECONDS} s"

# A tracefs instance of its own: other users of the top-level buffer are not disturbed.
mkdir "$TR" || fail "cannot make the tracefs instance $TR"
echo 0 >"$TR/tracing_on"
echo 16384 >"$TR/buffer_size_kb"
echo 1 >"$TR/options/record-tgid"
echo 1 >"$TR/events/kvm/kvm_pio/enable" || fail "cannot enable kvm:kvm_pio"
echo 1 >"$TR/events/kvm/kvm_userspace_exit/enable" || fail "cannot enable kvm:kvm_userspace_exit"
echo 1 >"$TR/tracing_on"

# vmexit's QMP is a chardev + -mon (auto must find it); the test asks on a -qmp of its own.
# --qmp-timeout 5s for the real QEMUs (here and below): in the nested bed a QEMU's answer takes
# 0.1 to 0.75 s with nothing else running (connect to info mtree -f: the greeting alone, which
# QEMU's monitor thread sends without the BQL, up to 0.37 s; a stopped QEMU up to 0.33 s): the
# bed's one emulated CPU, shared with the guest's vCPU thread, vmexit and this test, not a
# QEMU busy in KVM_RUN. At the default 500 ms every ask of a whole phase could miss (1 bed run
# in 3); the names are what is checked here, the default's notes above.
# --per-address: each port's row, checked port by port (the rows by device are checked below); a
# key table room for every byte SeaBIOS writes to the VGA text console (4000) and the rest: at
# the default 1024 the bed's longer run charged 7503 of 11155 IO exits to the `other` key.
"$VMEXIT" stat -v --by key --per-address --max-keys 65536 --qmp auto --qmp-timeout 5s --json -- \
	qemu-system-x86_64 -accel kvm -m 64 -display none -device virtio-rng-pci -pidfile "$TMP/q.pid" \
	-chardev "socket,id=vq,path=$TMP/vmexit.qmp,server=on,wait=off" -mon chardev=vq,mode=control \
	-qmp "unix:$TMP/test.qmp,server=on,wait=off" >"$TMP/out" 2>"$TMP/err" &
VPID=$!
for _ in $(seq 100); do [ -S "$TMP/test.qmp" ] && [ -s "$TMP/q.pid" ] && break; sleep 0.1; done
[ -S "$TMP/test.qmp" ] || { cat "$TMP/err"; fail "QEMU made no QMP socket in 10 s"; }
QPID=$(cat "$TMP/q.pid")	# QEMU removes the file when it quits
seabios_past_vga "$QPID"	# SeaBIOS: PCI enumeration, fw_cfg, VGA, the boot devices tried
# Without an interval stat names keys only in its summary; it asks QEMU again 2 s after its
# first ask (at QEMU's start, before SeaBIOS mapped the PCI BARs): 3 s here, so that on a fast
# host too the map it names the summary by is the one the test reads below.
sleep 3
wait_answered "$TMP/err"

python3 "$TMP/ask.py" "$TMP/test.qmp" "$TMP/mtree" || fail "the test's QMP conversation failed"
ends_within 20 "$VPID" "vmexit stat -- qemu" "$TMP/err"
rc=$?
VPID=
echo 0 >"$TR/tracing_on"
cat "$TR/trace" >"$TMP/trace"
[ $rc -eq 0 ] || { cat "$TMP/err"; fail "vmexit stat exited with $rc"; }
qmp_asked "$TMP/err" || { cat "$TMP/err"; fail "vmexit could not ask QEMU"; }

python3 - "$TMP" "$QPID" <<'PY'
import json, re, sys
d, qpid = sys.argv[1], int(sys.argv[2])
bad = []
def check(what, ok, detail=""):
    print(("ok: " if ok else "FAIL: ") + what + (f" ({detail})" if detail else ""))
    if not ok:
        bad.append(what)

# ftrace: every port access and every exit to the VMM of QEMU's threads (tgid in parens).
head = open(f"{d}/trace").read()
m = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", head)
check("ftrace kept every event", m and m.group(1) == m.group(2), m and m.group(0))
pio, uexit_io = {}, 0
for line in head.splitlines():
    t = re.match(r"\s*.+?-\d+\s+\(\s*(\d+)\)\s.*?(kvm_pio|kvm_userspace_exit): (.*)", line)
    if not t or int(t.group(1)) != qpid:
        continue
    if t.group(2) == "kvm_pio":
        p = re.match(r"pio_(read|write) at 0x([0-9a-f]+) ", t.group(3))
        k = (int(p.group(2), 16), "in" if p.group(1) == "read" else "out")
        pio[k] = pio.get(k, 0) + 1
    elif "KVM_EXIT_IO" in t.group(3):
        uexit_io += 1

sys.path.insert(0, d)
from mtree_io import io_view
io, root = io_view(f"{d}/mtree")
def region(port):
    for lo, hi, name, is_root in io:
        if lo <= port <= hi:
            return None if is_root else name
    return None

j = [json.loads(l) for l in open(f"{d}/out") if l.strip()][-1]
user, user_io_total, names, kern = {}, 0, {}, {}
# The guest's IO exits as each ISA names them: user "IO", SVM "io", VMX "IO_INSTRUCTION".
for r in j["rows"]:
    if r["reason_name"] not in ("IO", "io", "IO_INSTRUCTION"):
        continue
    if r["kind"] == "user":
        user_io_total += r["count"]
        if r["key_kind"] == "port":
            k = (r["key"], r["key_dir"])
            user[k] = user.get(k, 0) + r["count"]
            names[k] = r["key_name"]
    elif r["key_kind"] == "port":
        k = (r["key"], r["key_dir"])
        kern[k] = kern.get(k, 0) + r["count"]

check("QEMU made port exits to the VMM", user_io_total >= 100, f"{user_io_total}")
check("exits to the VMM for IO: vmexit's total is ftrace's", user_io_total == uexit_io,
      f"vmexit {user_io_total}, ftrace kvm_userspace_exit(KVM_EXIT_IO) {uexit_io}")
check("every IO exit to the VMM has its port", sum(user.values()) == user_io_total)
# Each port the VMM handled: as many exits as ftrace saw accesses.
for k in sorted(user):
    check(f"port {k[0]:#x} {k[1]}: {user[k]} exits", user[k] == pio.get(k, 0),
          f"ftrace kvm_pio {pio.get(k, 0)}")
# Ports ftrace saw that never reached the VMM are the ones KVM emulates itself: QEMU maps them to
# its kvm-* proxies (PIC, PIT, ELCR), and the PIT's speaker port 0x61; and the RTC index writes,
# which QEMU has KVM batch (coalesced PIO) rather than exit for each.
for k in sorted(set(pio) - set(user)):
    n = region(k[0]) or ""
    check(f"port {k[0]:#x} {k[1]}: not an exit of its own ({n})",
          n.startswith("kvm-") or k[0] == 0x61 or k == (0x70, "out"))
if kern:	# where kvm_exit fires, every access is a guest IO exit of its port
    diff = {k: (kern.get(k, 0), pio.get(k, 0)) for k in set(kern) | set(pio)
            if kern.get(k, 0) != pio.get(k, 0)}
    check("guest IO exits per port = kvm_pio", not diff,
          f"{sum(kern.values())} exits, {len(kern)} ports" if not diff else
          "; ".join(f"{k[0]:#x} {k[1]}: {a} vs {b}" for k, (a, b) in sorted(diff.items())[:8]))
    # A REP string IO with ECX 0 reads no port: the emulator's vendor check (kvm_cpuid leaf 0)
    # in it is no key of it (~21 per boot were keyed '0 vendor' before key_rules.h said so).
    leaf = sum(r["count"] for r in j["rows"] if r["kind"] != "user" and r["key_kind"] == "cpuid"
               and r["reason_name"] in ("io", "IO_INSTRUCTION"))
    check("no guest IO exit keyed by a CPUID leaf", leaf == 0, f"{leaf}")
# Each busy port is named as QEMU names it; where QEMU maps nothing, not after its root.
busy = [k for k in user if user[k] >= 10]
check("busy ports", len(busy) >= 3, f"{len(busy)}")
for k in sorted(busy):
    want = region(k[0])
    if want:
        check(f"port {k[0]:#x} named as QEMU does", names[k] == want,
              f"'{names[k]}', QEMU '{want}'")
    else:
        check(f"port {k[0]:#x} (no QEMU device) not named after the I/O root",
              names[k] != root, f"'{names[k]}'")
# MMIO keys named as QEMU's memory map names them at the end: the PCI BARs SeaBIOS assigned
# after vmexit's first ask too (e1000-mmio), which a stat without intervals named unmapped.
mem = io_view(f"{d}/mtree", "memory")[0]
def mem_region(a):
    return next((n for lo, hi, n, is_root in mem if lo <= a <= hi and not is_root), None)
mm = {(r["key"], r["key_dir"]): r["key_name"] for r in j["rows"] if r["key_kind"] == "mmio"}
want = {k: mem_region(k[0]) for k in mm if mem_region(k[0])}
wrong = [f"{k[0]:#x} {k[1]} '{mm[k]}', QEMU '{w}'" for k, w in sorted(want.items()) if mm[k] != w]
bars = {w for w in want.values() if w not in ("vga-lowmem", "pc.bios", "pc.rom", "pc.ram")}
check("MMIO keys named as QEMU's map names them", not wrong,
      f"{len(want)} of {len(mm)} keys in QEMU's map, PCI regions {sorted(bars)}" if not wrong
      else "; ".join(wrong[:6]))
check("MMIO keys in a PCI device's region", bars, f"{sorted(bars)}")
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || fail "per-port counts or names differ (above)"
echo "time: stat done at ${SECONDS} s"

# top --keys --qmp auto: a running QEMU's keys in the drill-down, named as its map names them.
# Its own QMP (a chardev + -mon, found on the command line) and the test's -qmp, as above.
rm -f "$TMP/q.pid"
echo >"$TR/trace"	# the waits below read the instance again: emptied, and on
echo 1 >"$TR/tracing_on"
# QEMU waits stopped (-S) until top is attached: top's window then holds SeaBIOS's first seconds
# (fw_cfg, PCI enumeration) however long its start takes (seconds in the nested bed).
qemu-system-x86_64 -accel kvm -m 64 -display none -device virtio-rng-pci -pidfile "$TMP/q.pid" \
	-chardev "socket,id=vq,path=$TMP/top.qmp,server=on,wait=off" -mon chardev=vq,mode=control \
	-qmp "unix:$TMP/test2.qmp,server=on,wait=off" -S -daemonize 2>"$TMP/qemu2.err" ||
	{ cat "$TMP/qemu2.err"; fail "QEMU did not start"; }
QPID=$(cat "$TMP/q.pid")
"$VMEXIT" top -v --once -x --keys --per-address --max-keys 65536 --qmp auto --qmp-timeout 5s \
	-d 10 -p "$QPID" \
	--width 160 >"$TMP/top" 2>"$TMP/top.err" &
TPID=$! VPID=$!	# cleanup ends it on a failure
# Attached: its BPF links (fdinfo's link_type) all made, none more for a second.
n=0 same=0
for _ in $(seq 120); do
	m=$(grep -ls '^link_type:' /proc/$TPID/fdinfo/* 2>/dev/null | wc -l)
	[ "$m" -gt 0 ] && [ "$m" = "$n" ] && same=$((same + 1)) || same=0
	n=$m
	[ $same -ge 2 ] && break
	sleep 0.5
done
[ $same -ge 2 ] || fail "vmexit top made no BPF links in 60 s"
python3 - "$TMP/test2.qmp" <<'PY' || fail "QMP cont failed"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rw")
f.readline()
for c in ("qmp_capabilities", "cont"):
    f.write(json.dumps({"execute": c}) + "\n")
    f.flush()
    while "event" in (r := json.loads(f.readline())):
        pass
    if "error" in r:
        sys.exit(f"{c}: {r['error']}")
PY
wait $TPID || { cat "$TMP/top.err"; fail "vmexit top --keys --qmp auto failed"; }
VPID=
qmp_asked "$TMP/top.err" || { cat "$TMP/top.err"; fail "top could not ask QEMU"; }
python3 "$TMP/ask.py" "$TMP/test2.qmp" "$TMP/mtree2" ||
	fail "the test's second QMP conversation failed"
# Not our child (-daemonize): gone once its pid is.
for _ in $(seq 200); do kill -0 "$QPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$QPID" 2>/dev/null && fail "QEMU still running 20 s after quit"
QPID=
python3 - "$TMP/top" "$TMP/mtree2" <<'PY' || fail "top's key names differ from QEMU's (above)"
import os, re, sys
sys.path.insert(0, os.path.dirname(sys.argv[2]))
from mtree_io import io_view
io = [(lo, hi, n) for lo, hi, n, is_root in io_view(sys.argv[2])[0] if not is_root]
# "kvm_userspace_exit(IO) 0x3d4 out vga   Total ...": port, direction, name (may be empty).
rows = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*kvm_userspace_exit\(IO\) (0x[0-9a-f]+) (in|out) ?(.*?)\s+(\d+)\s", line)
    if m:
        rows.append((int(m.group(1), 16), m.group(2), m.group(3), int(m.group(4))))
bad, named = 0, 0
for port, d, name, total in rows:
    want = next((n for lo, hi, n in io if lo <= port <= hi), None)
    if want:
        named += 1
        ok = name == want
        print(("ok: " if ok else "FAIL: ") + f"top: port {port:#x} {d} named '{name}', QEMU '{want}' ({total} exits)")
        bad += not ok
print(f"top: {len(rows)} port rows, {named} of them in QEMU's map")
sys.exit(1 if bad or named < 3 else 0)
PY
echo "time: top done at ${SECONDS} s"
# record --keys --qmp auto keeps the map; report groups the keys by device with it: each
# device's row is the sum of its ports' and addresses' rows (report --per-address of the same
# file), named and spanned as QEMU's own map (the test's ask) says; SeaBIOS's banner on the VGA
# text console is vga-lowmem's writes.
rm -f "$TMP/q.pid"
echo >"$TR/trace"
"$VMEXIT" record -v --keys --qmp auto --qmp-timeout 5s -o "$TMP/r.vmexit" -- qemu-system-x86_64 \
	-accel kvm -m 64 \
	-display none -device virtio-rng-pci -pidfile "$TMP/q.pid" \
	-chardev "socket,id=vq,path=$TMP/rec.qmp,server=on,wait=off" -mon chardev=vq,mode=control \
	-qmp "unix:$TMP/test3.qmp,server=on,wait=off" >"$TMP/rec.out" 2>"$TMP/rec.err" &
VPID=$!
for _ in $(seq 100); do [ -S "$TMP/test3.qmp" ] && [ -s "$TMP/q.pid" ] && break; sleep 0.1; done
[ -S "$TMP/test3.qmp" ] || { cat "$TMP/rec.err"; fail "QEMU (record) made no QMP socket in 10 s"; }
QPID=$(cat "$TMP/q.pid")
seabios_past_vga "$QPID"
sleep 1
wait_answered "$TMP/rec.err"
python3 "$TMP/ask.py" "$TMP/test3.qmp" "$TMP/mtree3" || fail "the test's third QMP conversation failed"
ends_within 20 "$VPID" "vmexit record -- qemu" "$TMP/rec.err"
rc=$?
VPID= QPID=
[ $rc -eq 0 ] || { cat "$TMP/rec.err"; fail "vmexit record --keys --qmp auto exited with $rc"; }
qmp_asked "$TMP/rec.err" || { cat "$TMP/rec.err"; fail "record could not ask QEMU"; }
"$VMEXIT" report -i "$TMP/r.vmexit" --keys --json >"$TMP/dev.json" 2>"$TMP/rep.err" ||
	{ cat "$TMP/rep.err"; fail "report --keys exited with $?"; }
"$VMEXIT" report -i "$TMP/r.vmexit" --keys --per-address --json >"$TMP/addr.json" \
	2>"$TMP/rep.err" || { cat "$TMP/rep.err"; fail "report --keys --per-address exited with $?"; }
python3 - "$TMP" <<'PY' || fail "keys by device differ from the per-address sums or QEMU's map (above)"
import json, re, sys
d = sys.argv[1]
bad = []
def check(what, ok, detail=""):
    print(("ok: " if ok else "FAIL: ") + what + (f" ({detail})" if detail else ""))
    if not ok:
        bad.append(what)
# QEMU's flat views (the test's own reading): I/O and memory, root ranges left out.
space, root, io, mem = None, None, [], []
for line in open(f"{d}/mtree3").read().splitlines():
    line = line.rstrip("\r")
    if line.startswith("FlatView"):
        space = None
    elif line.startswith(' AS "I/O"'):
        space = io
    elif line.startswith(' AS "memory"'):
        space = mem
    elif line.startswith(" Root memory region: "):
        root = line.split(": ", 1)[1]
    elif space is not None and line.startswith("  "):
        m = re.match(r"\s+([0-9a-f]+)-([0-9a-f]+) \(prio [-0-9]+, [^)]*\): (.*?)( @[0-9a-f]+)?( KVM)?$", line)
        if m and m.group(3) != root:
            space.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
def rows(path):
    j = [json.loads(l) for l in open(path) if l.strip()][-1]
    return [r for r in j["rows"] if r["kind"] == "user" and r["key_kind"] in ("port", "mmio")]
dev, addr = rows(f"{d}/dev.json"), rows(f"{d}/addr.json")
check("the same exits either way", sum(r["count"] for r in dev) == sum(r["count"] for r in addr),
      f"{sum(r['count'] for r in dev)} by device, {sum(r['count'] for r in addr)} per address")
groups = 0
for r in dev:
    lo, hi = r["key"], r.get("key_end", r["key"])
    part = [a for a in addr if a["key_kind"] == r["key_kind"] and a["key_dir"] == r["key_dir"]
            and a["reason"] == r["reason"] and a["pid"] == r["pid"] and lo <= a["key"] <= hi]
    n = sum(a["count"] for a in part)
    what = f"{r['key_kind']} {lo:#x}-{hi:#x} {r['key_dir']} {r['key_name']}"
    check(f"{what}: {r['count']} exits, the sum of its {len(part)} keys", r["count"] == n, f"{n}")
    sp = io if r["key_kind"] == "port" else mem
    qemu = next(((a, b, nm) for a, b, nm in sp if a <= lo <= b), None)
    if qemu:
        check(f"{what}: QEMU's region", (lo, hi, r["key_name"]) == qemu, f"QEMU {qemu[0]:#x}-{qemu[1]:#x} {qemu[2]}")
        groups += len(part) > 1
    else:
        check(f"{what}: no QEMU region, unmapped", r["key_name"] == "unmapped")
    for a in part:
        if a["key_name"] != r["key_name"]:
            check(f"{a['key']:#x}: named as its device", False, a["key_name"])
vga = [r for r in dev if r["key_name"] == "vga-lowmem" and r["key_dir"] == "write"]
check("SeaBIOS's banner: vga-lowmem writes, one row", len(vga) == 1 and vga[0]["count"] >= 10,
      f"{[(r['count'], r['reason'], r.get('vcpu'), r.get('guest'), r['pid'], hex(r['key']), hex(r.get('key_end', 0))) for r in vga]}")
check("devices with more than one key", groups >= 2, f"{groups}")
sys.exit(1 if bad else 0)
PY
echo "time: record done at ${SECONDS} s"
echo "PASS: qmp_host"
