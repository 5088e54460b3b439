#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stat --keep on this host's real KVM: the rows of guests that ended more than --keep ago leave
# the summary's per-guest rows for one "(ended)" row per reason (pid 0), and the summary stays
# exact: per reason, it is still the sum of every interval printed.
#
# 12 short guests (`vmexit-guest --io 10`: 11 KVM_EXIT_IO each, 10 of them completed: the last
# is in flight when its thread exits) run one after the other under `stat --keep 1s 0.5 --json
# -- COMMAND`; the command then waits 6 s, well past --keep and the sample that notices them.
# Usage: tests/host/test_stat_keep_host.sh OUTDIR
set -u
. "$(dirname "$0")/lib.sh"
host_binaries "${1:?usage: $0 OUTDIR}"
need_kvm_bpf
need_cmd python3 python3
TMP=$(mktemp -d /tmp/vmexit-test-keep.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
NAME=keep$$-

chk "$VMEXIT" stat --keep 1s 0.5 --json -- bash -c \
	"for i in \$(seq 12); do '$GUEST' --name $NAME\$i --io 10 >/dev/null 2>&1 || exit 1; sleep 0.2; done; sleep 6" \
	>"$TMP/stat.json" || fail "stat --keep 1s -- ... failed"

python3 - "$TMP/stat.json" "$NAME" <<'EOF' || fail "stat --keep (above)"
import json, sys
from collections import defaultdict
objs = [json.loads(l) for l in open(sys.argv[1])]
name = sys.argv[2]
final = objs[-1]
assert final["final"], "the last line is not the summary"
bad = []
# Each short guest, from the intervals: 11 IO exits, 10 completed (the workload's numbers).
per_guest = defaultdict(lambda: [0, 0])
for o in objs[:-1]:
    for r in o["rows"]:
        if r["guest"].startswith(name) and r["reason_name"] == "IO" and r["kind"] == "user":
            per_guest[r["guest"]][0] += r["count"]
            per_guest[r["guest"]][1] += r["completed"]
if sorted(per_guest) != sorted(f"{name}{i}" for i in range(1, 13)):
    bad.append(f"intervals show guests {sorted(per_guest)}, want {name}1..12")
for g, (c, d) in per_guest.items():
    if (c, d) != (11, 10):
        bad.append(f"{g}: {c} IO exits, {d} completed in the intervals, want 11 and 10")
# Their rows left the summary for the (ended) rows: pid 0, one per reason.
own = [r for r in final["rows"] if r["guest"].startswith(name)]
if own:
    bad.append(f"rows of guests ended long before the end are still their own: {own}")
ended = [r for r in final["rows"] if r["pid"] == 0]
if any(r["guest"] != "(ended)" or r["vcpu"] != -1 for r in ended):
    bad.append(f"(ended) rows: {ended}")
if len({(r["kind"], r["isa"], r["reason"]) for r in ended}) != len(ended):
    bad.append(f"more than one (ended) row for a reason: {ended}")
io = [r for r in ended if r["kind"] == "user" and r["reason_name"] == "IO"]
if not io or io[0]["count"] < 12 * 11:
    bad.append(f"(ended) IO row {io}: want at least the 12 guests' 132 exits")
# Exact: per reason the summary is the sum of the intervals printed (folded rows included).
def sums(rows_lists):
    s = defaultdict(lambda: [0, 0, 0])
    for rows in rows_lists:
        for r in rows:
            k = (r["kind"], r["isa"], r["reason"])
            s[k][0] += r["count"]
            s[k][1] += r["completed"]
            s[k][2] += r["total_ns"]
    return dict(s)
if sums([final["rows"]]) != sums(o["rows"] for o in objs[:-1]):
    bad.append(f"summary {sums([final['rows']])} != sum of intervals {sums(o['rows'] for o in objs[:-1])}")
# The (ended) IO row's extremes and histogram are those of what it holds.
for r in io:
    if not r["min_ns"] <= r["p50_ns"] <= r["max_ns"] or r["hist_total"] != r["completed"]:
        bad.append(f"(ended) IO row inconsistent: {r}")
print("\n".join(bad) or f"ok: 12 guests folded: (ended) IO row {io[0]['count']} exits, "
      f"{io[0]['completed']} completed; summary = sum of {len(objs) - 1} intervals")
sys.exit(1 if bad else 0)
EOF
# --by key: an ended guest's keys leave the kernel's table once folded, so that --max-keys
# counts the running guests'. Only IO exits traced (-r), each guest's keys (outs to 0xe9, the
# done exit to 0xea: 2 as exits to the VMM, 2 more as guest IO exits where kvm_exit fires) fill
# --max-keys; the second guest, started once the first is folded, gets its own keys: no exit
# counted as keys_full, each guest's 10 outs under 0xe9. (Kept, the second's go to other.)
MAXK=2
kvm_exit_fires "$GUEST" && MAXK=4
chk "$VMEXIT" stat --by key -r io,IO_INSTRUCTION --max-keys $MAXK --keep 1s 0.5 --json -- bash -c \
	"'$GUEST' --name ${NAME}k1 --io 10 >/dev/null 2>&1 && sleep 3 &&
	 '$GUEST' --name ${NAME}k2 --io 10 >/dev/null 2>&1" >"$TMP/keys.json" ||
	fail "stat --by key --keep 1s -- ... failed"
python3 - "$TMP/keys.json" <<'EOF' || fail "stat --by key --keep (above)"
import json, sys
final = [json.loads(l) for l in open(sys.argv[1])][-1]
outs = {}
for r in final["rows"]:
    if r["reason_name"] == "IO" and r["key_kind"] == "port" and r["key"] == 0xe9:
        outs[r["pid"]] = outs.get(r["pid"], 0) + r["count"]
full = final["lost"]["keys_full"]
print(f"outs to 0xe9 per guest pid: {outs}; keys_full {full}")
sys.exit(0 if full == 0 and sorted(outs.values()) == [10, 10] else 1)
EOF
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: test_stat_keep_host"
