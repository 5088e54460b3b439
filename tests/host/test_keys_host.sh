#!/bin/bash
# Real kernel, this host: stat --by key counts each port and address exactly as the bundled
# guest makes them (outs to 0xe9, ins from 0xe8, MMIO writes to 0x10000000, HLTs with no key),
# per vCPU with --by vcpu,key; a key table too small charges the rest to (other) and counts
# them under lost as keys_full. Where KVM traces no kvm_exit the keys of exits to the VMM come
# from kvm_run (bpf/run_key.bpf.h, no key program): the same counts with VMEXIT_RUN_KEYS=0,
# which takes the key programs, and each top holds the programs its -v line names. stream --keys and record --keys + report --by key give the same
# per-key counts from each exit's own record (and keep the exits left in flight, which stat's
# key table does not have), with no key table to fill.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"

run() {	# run NAME VCPUS VMEXIT-ARGS...: vmexit stat ARGS -- guest, output in $TMP/NAME
	local name=$1 vcpus=$2; shift 2
	"$OUT/vmexit" stat "$@" -- "$OUT/vmexit-guest" --vcpus "$vcpus" --io 300 --in 200 \
		--mmio 100 --hlt 50 >"$TMP/$name" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "vmexit stat $* exited with $?"; }
}
run vm 2 --json --by key
VMEXIT_RUN_KEYS=0 run vm0 2 --json --by key
run vcpu 2 --csv --by vcpu,key
run table 2 --by key -v
run full 1 --json --by key --max-keys 1
# The same guest under stream and record --keys (the table they do not use is one entry).
GUEST=("$OUT/vmexit-guest" --vcpus 2 --io 300 --in 200 --mmio 100 --hlt 50)
cap() {	# cap NAME vmexit ARGS...: output in $TMP/NAME
	local name=$1; shift
	"$@" -- "${GUEST[@]}" >"$TMP/$name" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "$* exited with $?"; }
}
cap sjson "$OUT/vmexit" stream --keys --json
cap sline "$OUT/vmexit" stream --keys
cap splain "$OUT/vmexit" stream --json
cap rec.log "$OUT/vmexit" record --keys -o "$TMP/rec.vmexit"
"$OUT/vmexit" report -i "$TMP/rec.vmexit" --by key --json >"$TMP/rjson" ||
	fail "report --by key exited with $?"
"$OUT/vmexit" report -i "$TMP/rec.vmexit" --by vcpu,key --csv >"$TMP/rcsv" ||
	fail "report --by vcpu,key --csv exited with $?"
"$OUT/vmexit" report -i "$TMP/rec.vmexit" --events --json >"$TMP/revents" ||
	fail "report --events --json exited with $?"

# top --keys: -x starts in the view of every reason's keys; --once prints it when the
# interval ends, here cut short (SIGINT) once the guest is done, so that the whole run is in.
# Without --keys no key program is loaded.
stopped_guest --vcpus 2 --io 30 --in 20 --mmio 10 --hlt 5
"$OUT/vmexit" top --once --keys --per-address -x -p "$gpid" -d 120 --width 160 -v \
	>"$TMP/top" 2>"$TMP/top.err" &
tpid=$!
wait_tracing $tpid
held_prog_names $tpid >"$TMP/progs.keys"
kill -CONT "$gpid"
ends_within 120 "$gpid" "the guest" "$TMP/top.err" >/dev/null
signal_ends INT $tpid 60 "top --once --keys" || { cat "$TMP/top.err"; fail "top --once --keys failed"; }
"$OUT/vmexit" top --once -d 10 >/dev/null 2>"$TMP/top2.err" &
tpid=$!
wait_tracing $tpid
held_prog_names $tpid >"$TMP/progs.nokeys"
signal_ends INT $tpid 60 "top --once" || { cat "$TMP/top2.err"; fail "top --once failed"; }
# The programs each top holds (another vmexit on the host may hold key_pio: not ours to judge).
grep -qx "kvm_userspace_exit\(_btf\)\?" "$TMP/progs.nokeys" ||
	fail "top without --keys: its programs not found (held: $(echo $(cat "$TMP/progs.nokeys")))"
# With keys from kvm_run (its -v says so) the put's program and no key program; else key_pio.
if grep -q "hooks: keys of exits to the VMM from kvm_run" "$TMP/top.err"; then
	echo "note: keys of exits to the VMM from kvm_run"
	grep -qx "kvm_run_fpu_key\(ed\)\?" "$TMP/progs.keys" || fail "top --keys: no kvm_run_fpu_keyed program"
	grep -q "^key_" "$TMP/progs.keys" && fail "top --keys: key programs with kvm_run's keys"
else
	grep -qx "key_pio" "$TMP/progs.keys" || fail "top --keys: no key_pio program loaded"
fi
grep -qx "key_pio" "$TMP/progs.nokeys" && fail "top without --keys loaded key_pio"
# Both ways of keying chosen as the -v line of each says, and the same on every host.
grep -q "hooks: keys of exits to the VMM from" "$TMP/table.err" ||
	fail "stat --by key -v: no line on its keys: $(cat "$TMP/table.err")"
grep -q "hooks: keys of exits to the VMM from kvm_run" "$TMP/vm0.err" &&
	fail "VMEXIT_RUN_KEYS=0 took kvm_run's keys"

python3 - "$TMP" $kfires <<'PY'
import csv, json, sys
d, kfires = sys.argv[1], int(sys.argv[2])
io, inn, mmio, hlt = 300, 200, 100, 50
bad = []
def check(what, got, want):
    print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
def final(name):
    return [json.loads(l) for l in open(f"{d}/{name}") if l.strip()][-1]
def user_keys(rows, col="count"):
    out = {}
    for r in rows:
        if r["kind"] == "user" and r[col]:
            k = (r["reason_name"], r["key_kind"], r["key"], r["key_dir"], r["key_name"])
            out[k] = out.get(k, 0) + r[col]
    return out

# Each vCPU's last exit (the done port, 0xea) never completes: the VMM quits in it. Its row
# counts it all the same (as the cell's row does), as not completed.
want = {("IO", "port", 0xe9, "out", "debugcon"): 2 * io,
        ("IO", "port", 0xe8, "in", ""): 2 * inn,
        ("MMIO", "mmio", 0x10000000, "write", ""): 2 * mmio,
        ("HLT", "none", 0, "", ""): 2 * hlt}
inflight = {("IO", "port", 0xea, "out", ""): 2}
for name in ("vm", "vm0"):
    j = final(name)
    w = "--by key" if name == "vm" else "VMEXIT_RUN_KEYS=0 --by key"
    check(f"{w}: exits to the VMM per key", user_keys(j["rows"]), want | inflight)
    check(f"{w}: completed per key", user_keys(j["rows"], "completed"), want)
    check(f"{w}: nothing lost", {k: v for k, v in j["lost"].items()
                                 if v and k != "unmatched_entry"}, {})
j = final("vm")
if kfires:
    # Where kvm_exit fires, the guest exits behind them carry the same ports.
    kern = {}
    for r in j["rows"]:
        if r["kind"] == "kernel" and r["key_kind"] == "port":
            kern[(r["key"], r["key_dir"])] = kern.get((r["key"], r["key_dir"]), 0) + r["count"]
    check("--by key: guest IO exits per port", kern,
          {(0xe9, "out"): 2 * io, (0xe8, "in"): 2 * inn, (0xea, "out"): 2})

rows = [r for r in csv.DictReader(open(f"{d}/vcpu")) if r["Final"] == "1" and r["ISA"] == "user"]
per = {}
for r in rows:
    k = (r["vCPU"], r["Exit_Reason"], r["Key_Kind"], r["Key"], r["Key_Dir"], r["Key_Name"])
    per[k] = per.get(k, 0) + int(r["NR_Exit"])
wantv = {}
for v in ("0", "1"):
    wantv[(v, "KVM_EXIT_IO", "port", str(0xe9), "out", "debugcon")] = io
    wantv[(v, "KVM_EXIT_IO", "port", str(0xe8), "in", "")] = inn
    wantv[(v, "KVM_EXIT_MMIO", "mmio", str(0x10000000), "write", "")] = mmio
    wantv[(v, "KVM_EXIT_HLT", "none", "0", "", "")] = hlt
check("--by vcpu,key (CSV): per vCPU and key", per,
      wantv | {(v, "KVM_EXIT_IO", "port", str(0xea), "out", ""): 1 for v in ("0", "1")})

t = open(f"{d}/table").read()
line = [l for l in t.splitlines() if "0xe9 out debugcon" in l and "KVM_EXIT_IO" in l]
check("table: a KEY column reading '0xe9 out debugcon'", len(line), 1)
tok = line[0].split() if line else []
check("table: its count", tok[tok.index("KVM_EXIT_IO") + 1] if tok else None, str(2 * io))

# One key fits: the first the vCPU makes (its outs); its ins, MMIO writes and done exit go to
# (other).
f = final("full")
wantf = {("IO", "port", 0xe9, "out", "debugcon"): io,
         ("IO", "other", 0, "", ""): inn + 1,
         ("MMIO", "other", 0, "", ""): mmio,
         ("HLT", "none", 0, "", ""): hlt}
got = user_keys(f["rows"])
if kfires:	# the guest exits take keys too: which ones fit first is the kernel's order
    got = {k: v for k, v in got.items() if k[1] in ("none",)}
    wantf = {k: v for k, v in wantf.items() if k[1] in ("none",)}
check("--max-keys 1: the rest in (other)", got, wantf)
if not kfires:
    check("--max-keys 1: keys_full counts them", f["lost"]["keys_full"], inn + mmio + 1)
else:
    check("--max-keys 1: keys_full counts them", f["lost"]["keys_full"] > 0, True)

# stream --keys: one record per exit, each with its key; the done port's exits never complete
# (in_flight). A stream fills no key table (--max-keys is refused): it loses nothing.
def stream_keys(lines, kind):
    done, left = {}, {}
    for e in lines:
        if e.get("type") != kind:
            continue
        if kind == "user_exit":
            k = (e["reason_name"], e["key_kind"], e["key"], e["key_dir"], e["key_name"])
        else:
            if e["key_kind"] != "port":
                continue
            k = (e["key"], e["key_dir"])
        side = left if e.get("in_flight") else done
        side[k] = side.get(k, 0) + 1
    return done, left
for name in ("sjson", "revents"):
    ev = [json.loads(l) for l in open(f"{d}/{name}") if l.strip()]
    done, left = stream_keys(ev, "user_exit")
    what = "stream --keys --json" if name == "sjson" else "record --keys, report --events --json"
    check(f"{what}: exits to the VMM per key", done, want)
    check(f"{what}: left in flight per key", left, inflight)
    check(f"{what}: no loss", [e for e in ev if "lost" in e], [])
    if kfires:
        done, _ = stream_keys(ev, "exit")
        check(f"{what}: guest IO exits per port", done, {(0xe9, "out"): 2 * io, (0xe8, "in"): 2 * inn})
plain = [json.loads(l) for l in open(f"{d}/splain") if l.strip()]
check("stream without --keys: no key fields", [e for e in plain if "key_kind" in e], [])

# report --by key: stat --by key's rows, and the exits left in flight (counted, no latency).
r = final("rjson")
done = {}
left = {}
for row in r["rows"]:
    if row["kind"] == "user":
        k = (row["reason_name"], row["key_kind"], row["key"], row["key_dir"], row["key_name"])
        if row["completed"]:
            done[k] = done.get(k, 0) + row["completed"]
        if row["count"] > row["completed"]:
            left[k] = left.get(k, 0) + row["count"] - row["completed"]
check("report --by key: exits to the VMM per key", done, want)
check("report --by key: as stat --by key", done, user_keys(j["rows"], "completed"))
check("report --by key: left in flight as stat --by key's",
      left, {k: v - user_keys(j["rows"], "completed").get(k, 0)
             for k, v in user_keys(j["rows"]).items() if v > user_keys(j["rows"], "completed").get(k, 0)})
check("report --by key: left in flight", left, inflight)
rows = [x for x in csv.DictReader(open(f"{d}/rcsv")) if x["ISA"] == "user"]
per = {}
for x in rows:
    k = (x["vCPU"], x["Exit_Reason"], x["Key_Kind"], x["Key"], x["Key_Dir"], x["Key_Name"])
    per[k] = per.get(k, 0) + int(x["Completed"])
per = {k: v for k, v in per.items() if v}
check("report --by vcpu,key (CSV): per vCPU and key", per, wantv)

# The stream's line: a KEY column after the latency, as stat's.
lines = open(f"{d}/sline").read().splitlines()
check("stream --keys: header has KEY", lines[0].split()[-1] if lines else None, "KEY")
check("stream --keys: lines of 0xe9 out debugcon",
      len([l for l in lines if " KVM_EXIT_IO " in l and " 0xe9 out debugcon " in l
           and "in_flight" not in l]), 2 * io)
check("stream --keys: lines of 0xe8 in",
      len([l for l in lines if " KVM_EXIT_IO " in l and " 0xe8 in " in l]), 2 * inn)

# top --once --keys -x: a row per reason and key, its Total the whole run's.
import re
t = open(f"{d}/top").read().splitlines()
print("\n".join(t))
rows = {}
for l in t:
    m = re.match(r"^[ >](kvm_(?:userspace_)?exit\(\w+\)) (.+?) +(\d+) +\d+ ", l)
    if m:
        rows[(m.group(1), m.group(2))] = int(m.group(3))
check("top --keys: the view's title", any(l.startswith("View: keys of exits of ") for l in t), True)
check("top --once --keys -x: exits to the VMM per key",
      {k: v for k, v in rows.items() if k[0].startswith("kvm_userspace_exit")},
      {("kvm_userspace_exit(IO)", "0xe9 out debugcon"): 60, ("kvm_userspace_exit(IO)", "0xe8 in"): 40,
       ("kvm_userspace_exit(MMIO)", "0x10000000 write"): 20, ("kvm_userspace_exit(HLT)", "(none)"): 10,
       ("kvm_userspace_exit(IO)", "0xea out"): 2})
if kfires:
    # A port's key names its direction: on VMX an external interrupt is keyed by its vector,
    # and the timer's ("0xec LOCAL_TIMER", seen in the VMX 6.1 bed) starts as a port's does.
    kern = {k[1]: v for k, v in rows.items()
            if k[0].startswith("kvm_exit(") and re.match(r"0x[0-9a-f]+ (?:in|out)(?: |$)", k[1])}
    check("top --once --keys -x: guest IO exits per port", kern,
          {"0xe9 out debugcon": 60, "0xe8 in": 40, "0xea out": 2})
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc -eq 0 ] || fail "per-key counts differ (above)"
# Bad input: one grouping and one key kind at most, said in one line.
"$OUT/vmexit" stat --by vcpu,reason 1 1 >/dev/null 2>"$TMP/err" && fail "--by vcpu,reason accepted"
grep -q "combine one of vm, vcpu, reason with one of key, rip" "$TMP/err" ||
	fail "--by vcpu,reason: no hint: $(cat "$TMP/err")"
# A recording made without --keys has none to count (--by rip: test_rip_host).
"$OUT/vmexit" record -o "$TMP/nokeys.vmexit" -- "$OUT/vmexit-guest" --io 3 >/dev/null 2>&1 ||
	fail "record without --keys exited with $?"
"$OUT/vmexit" report -i "$TMP/nokeys.vmexit" --by key >/dev/null 2>"$TMP/err" &&
	fail "report --by key of a recording without keys accepted"
grep -q "nokeys.vmexit was recorded without keys (record it with vmexit record --keys)" "$TMP/err" ||
	fail "report --by key without keys: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/err")" = 1 ] || fail "report --by key without keys: not one line: $(cat "$TMP/err")"
echo "PASS: keys_host"
