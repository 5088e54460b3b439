#!/bin/bash
# Real kernel, this host: a guest whose name holds a newline, a form feed, a byte that is not
# UTF-8 and a terminal escape cannot start a line or reach the terminal in any text output
# (list guests, the stat table and --hist, stream lines, top --once, report, the -g errors):
# each shows the name escaped as text_escape.h says, in its place on its own line.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"
trap 'rm -rf "$TMP"; [ -n "${lpid:-}" ] && kill $lpid 2>/dev/null' EXIT
vcpus=2 io=50
# vmexit-guest runs one VM named by the first guest= element ("ok", which it accepts); vmexit,
# like QEMU, takes the last one: the name below, as whoever writes a VMM command line may.
NAME=$'we ird "na\\me"\n\f\xfe; <b>x\e[7m'
SHOWN='we ird "na\me"\n\x0c\xfe; <b>x\x1b[7m'
CUT='we ird "na\me"\n'	# the first 16 columns, in the tables
G=("$OUT/vmexit-guest" -name "guest=ok,guest=$NAME" --vcpus $vcpus --io $io)

# no_controls FILE WHAT: FILE has no control byte but newline, no byte that is not UTF-8.
no_controls() {
	LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$1" && fail "$2: a control character: $(cat -A "$1")"
	# python3, not iconv: the nested bed (test_nested_host) brings python3 along, no iconv.
	python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$1" 2>/dev/null ||
		fail "$2: not UTF-8: $(cat -A "$1")"
	return 0
}
# count FILE FIXED-PREFIX: the lines of FILE that start with the fixed string.
count() {	# (through the environment: awk -v would turn the name's \n into a newline)
	P=$2 awk 'index($0, ENVIRON["P"]) == 1 { n++ } END { print n + 0 }' "$1"
}
# named FILE: the lines of FILE with " $SHOWN " in them, and not starting with '#'.
named() {
	N=$SHOWN awk '!/^#/ && index($0, " " ENVIRON["N"] " ")' "$1"
}

# list guests, while the guest runs.
"$OUT/vmexit-guest" -name "guest=ok,guest=$NAME" --io 10 --seconds 60 >/dev/null 2>&1 &
lpid=$!
for i in $(seq 100); do
	chk "$VMEXIT" list guests >"$TMP/list" || fail "vmexit list guests: exit $?"
	grep -q "^ *$lpid  " "$TMP/list" && break
	sleep 0.2
done
no_controls "$TMP/list" "list guests"
[ "$(grep -c "^ *$lpid  " "$TMP/list")" = 1 ] &&
	[ "$(count "$TMP/list" "$(printf '  %7d  %s' $lpid "$SHOWN")")" = 1 ] ||
	fail "list guests: no line '$SHOWN' for pid $lpid: $(cat -A "$TMP/list")"
# Every line is one guest: a pid, then a name.
[ "$(grep -cvE '^ +[0-9]+  ' "$TMP/list")" = 0 ] || fail "list guests: a line that is not a guest"
echo "list guests: the name escaped on its guest's line: ok"

# -g with a name no guest has: the message names it escaped, and lists the guests so.
"$VMEXIT" stat -g $'no\nsuch\e[0m' 0.1 1 >/dev/null 2>"$TMP/g.err" && fail "stat -g nosuch: exit 0"
no_controls "$TMP/g.err" "stat -g nosuch"
[ "$(head -1 "$TMP/g.err")" = "vmexit: no running guest named 'no\nsuch\x1b[0m'; running guests:" ] &&
	[ "$(count "$TMP/g.err" "$(printf '  %7d  %s' $lpid "$SHOWN")")" = 1 ] ||
	fail "stat -g nosuch: $(cat -A "$TMP/g.err")"
echo "stat -g: the names escaped: ok"

# top --once: the VM's row under the header, its label cut at a whole escape.
chk "$VMEXIT" top --once -d 2 --width 100 -p $lpid >"$TMP/top" || fail "top --once: exit $?"
no_controls "$TMP/top" "top --once"
[ "$(count "$TMP/top" " $SHOWN ")" = 1 ] || fail "top --once: no row for '$SHOWN': $(cat -A "$TMP/top")"
kill $lpid 2>/dev/null
wait $lpid 2>/dev/null
lpid=
echo "top --once: the name escaped, in its row: ok"

# The stat table (one row per vCPU and reason, the name cut to 16 columns) and --hist (the
# whole name on each histogram's title line).
chk "$VMEXIT" stat --by vcpu --hist 30 -- "${G[@]}" >"$TMP/stat" || fail "vmexit stat: exit $?"
no_controls "$TMP/stat" "stat"
# The summary's user IO row of each vCPU, and its histogram.
[ "$(grep -cE "^$(printf '%s' "$CUT" | sed 's/[][\\.*^$"]/\\&/g') +[0-9]+ KVM_EXIT_IO " "$TMP/stat")" -ge $vcpus ] ||
	fail "stat: no IO row per vCPU starting with '$CUT': $(cat -A "$TMP/stat")"
for v in $(seq 0 $((vcpus - 1))); do
	[ "$(count "$TMP/stat" "$SHOWN vCPU $v KVM_EXIT_IO")" -ge 1 ] ||
		fail "stat --hist: no title '$SHOWN vCPU $v KVM_EXIT_IO': $(cat -A "$TMP/stat")"
done
echo "stat table and --hist: the name escaped, in its column: ok"

# A long name of 2-byte characters: cut at a character, padded by columns, so that every row's
# columns stay under the header's (python counts the columns: one a character here).
U=$'g\u00e4st-\u00fcn\u00efc\u00f6d\u00e9-sehr-lang'
chk "$VMEXIT" stat --by vcpu 30 -- "$OUT/vmexit-guest" -name "guest=ok,guest=$U" \
	--vcpus $vcpus --io $io >"$TMP/ustat" || fail "vmexit stat (UTF-8 name): exit $?"
python3 - "$TMP/ustat" "$U" $vcpus <<'PY' || fail "stat: columns of the UTF-8 name's rows"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
name, vcpus = sys.argv[2], int(sys.argv[3])
ok, head, nrows = True, None, 0
for r in lines:
    if r.startswith(("VM ", "GUEST ")):
        head = r
    if not r.startswith(name[:16] + " "):
        continue
    nrows += 1
    # The reason starts where the header's REASON does, a count ends where COUNT does (guest
    # exits too, where kvm_exit fires).
    c = head.index("REASON")
    good = r[c - 1] == " " and r[c] != " "
    if head.startswith("VM "):
        c = head.index("COUNT") + 4
        good &= r[c + 1] == " " and r[c].isdigit()
    if not good:
        print(f"misplaced: {r!r} under {head!r}")
    ok &= good
print(f"stat: {nrows} rows for {name[:16]!r}")
sys.exit(0 if ok and nrows >= vcpus else 1)
PY
echo "stat: a UTF-8 name cut at a character, the columns in place: ok"

# stream: every exit on its own line, which starts with the times and the name.
chk "$VMEXIT" stream -- "${G[@]}" >"$TMP/stream" || fail "vmexit stream: exit $?"
no_controls "$TMP/stream" "stream"
bad=$(N=$SHOWN awk '!/^#/ && index($0, " " ENVIRON["N"] " ") == 0' "$TMP/stream" | head -3)
[ -z "$bad" ] || fail "stream: lines without the escaped name: $bad"
# Each vCPU's io outs and its done exit, to the VMM.
user_io=$(named "$TMP/stream" | grep -cE ' KVM_EXIT_IO +[0-9.]+(ns|us|ms|s) errno=')
[ "$user_io" = $((vcpus * (io + 1))) ] ||
	fail "stream: $user_io exits to the VMM for IO, expected $((vcpus * (io + 1)))"
echo "stream: $user_io IO exits to the VMM, one line each, the name escaped: ok"

# record and report: the file keeps the name as it is; report's table and lines escape it.
chk "$VMEXIT" record -o "$TMP/rec" -- "${G[@]}" >/dev/null || fail "vmexit record: exit $?"
chk "$VMEXIT" report -i "$TMP/rec" --by vcpu >"$TMP/report" || fail "vmexit report: exit $?"
no_controls "$TMP/report" "report"
[ "$(count "$TMP/report" "$CUT")" -ge $vcpus ] || fail "report: no rows for '$CUT'"
chk "$VMEXIT" report -i "$TMP/rec" --events >"$TMP/events" || fail "vmexit report --events: exit $?"
no_controls "$TMP/events" "report --events"
user_io=$(named "$TMP/events" | grep -cE ' KVM_EXIT_IO +[0-9.]+(ns|us|ms|s) errno=')
[ "$user_io" = $((vcpus * (io + 1))) ] ||
	fail "report --events: $user_io exits to the VMM for IO, expected $((vcpus * (io + 1)))"
"$VMEXIT" report -i "$TMP/rec" -g nosuch >/dev/null 2>"$TMP/rg.err" && fail "report -g nosuch: exit 0"
no_controls "$TMP/rg.err" "report -g nosuch"
grep -qF "  $SHOWN" "$TMP/rg.err" || fail "report -g nosuch: $(cat -A "$TMP/rg.err")"
echo "record/report: the name escaped in the table, the lines and the -g error: ok"

sanitizer_reports && fail "sanitizer reports"
echo "PASS: test_names_host"
