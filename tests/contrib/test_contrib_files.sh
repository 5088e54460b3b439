#!/bin/bash
# The shipped integration files, no kernel needed: `make install` puts the systemd unit where
# systemd looks, with the installed binary's path; systemd-analyze verify accepts it; the Grafana
# dashboard is dashboard JSON whose every query parses as PromQL (promtool check rules) and
# names only metrics vmexit serve exports. $1: the build directory.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/../host/lib.sh"
need_cmd systemd-analyze systemd
need_cmd promtool prometheus
[ -x "$OUT/vmexit" ] || fail "$OUT/vmexit not built"
[ -x "$OUT/tests/test_prom_exposition" ] || fail "$OUT/tests/test_prom_exposition not built"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$(dirname "$0")/../.." || exit 1

# -o: install what this build dir holds, never rebuild it with other flags.
make -s -o "$OUT/vmexit" install OUTPUT="$OUT" DESTDIR="$TMP/root" PREFIX=/usr >"$TMP/install.log" 2>&1 ||
	{ cat "$TMP/install.log"; fail "make install failed"; }
unit=$TMP/root/usr/lib/systemd/system/vmexit.service
for f in "$TMP/root/usr/sbin/vmexit" "$TMP/root/usr/share/man/man8/vmexit.8" "$unit"; do
	[ -f "$f" ] || fail "make install did not install ${f#$TMP/root}"
done
grep -qx 'ExecStart=/usr/sbin/vmexit serve --listen localhost:9477' "$unit" ||
	fail "installed unit does not start the installed binary: $(grep ExecStart "$unit")"
# Which capabilities: tests/host/test_unit_caps_host.sh runs serve under the unit's own set.
for want in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes; do
	grep -qx "$want" "$unit" || fail "unit lacks $want"
done
grep -q '^CapabilityBoundingSet=CAP_' "$unit" || fail "unit does not bound its capabilities"
# systemd checks that ExecStart is executable: point it at the DESTDIR copy.
sed "s|=/usr/sbin/vmexit|=$TMP/root/usr/sbin/vmexit|" "$unit" >"$TMP/vmexit.service"
out=$(systemd-analyze verify --man=no "$TMP/vmexit.service" 2>&1)
rc=$?
echo "systemd-analyze verify: exit $rc${out:+: $out}"
[ $rc -eq 0 ] && [ -z "$out" ] || fail "systemd-analyze verify complains about the unit"

# The metric names an exposition holds (every family, in-flight ones included).
"$OUT/tests/test_prom_exposition" "$TMP" >/dev/null || fail "test_prom_exposition"
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
$PY - contrib/grafana-dashboard.json "$TMP/text.prom" "$TMP/rules.yml" <<'PY' || fail "dashboard (above)"
import json, re, sys
dash = json.load(open(sys.argv[1]))
exported = {l.split()[2] for l in open(sys.argv[2]) if l.startswith("# TYPE ")}
bad = []
def need(what, ok):
    print(f"{what}: {'ok' if ok else 'NO'}")
    if not ok:
        bad.append(what)
need("dashboard fields", isinstance(dash.get("schemaVersion"), int) and dash.get("uid")
     and dash.get("title") and isinstance(dash.get("panels"), list))
ids = [p.get("id") for p in dash["panels"]]
need("unique panel ids", len(ids) == len(set(ids)) and None not in ids)
exprs = []
for p in dash["panels"]:
    g = p.get("gridPos", {})
    need(f"panel '{p.get('title')}' type and grid", p.get("type") in ("timeseries", "stat", "heatmap")
         and all(k in g for k in "xywh") and g["x"] + g["w"] <= 24)
    for t in p.get("targets", []):
        exprs.append((p["title"], t["expr"]))
titles = " | ".join(p["title"].lower() for p in dash["panels"])
for topic in ("rate by reason", "time in exit", "heatmap", "p99", "stuck", "lost", "own cost"):
    need(f"a panel on {topic}", topic in titles)
for v in dash["templating"]["list"]:
    if v["type"] == "query":
        exprs.append((f"variable {v['name']}", re.sub(r"label_values\((.*),\s*\w+\)$", r"\1", v["definition"])))
# Every vmexit_* name used is an exported family (histogram and counter suffixes stripped).
for where, e in exprs:
    for name in re.findall(r"\bvmexit_[a-z_]+", e):
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        need(f"{where}: {name} is exported", name in exported or base in exported)
# Grafana's variables replaced by values, each query becomes a recording rule for promtool.
with open(sys.argv[3], "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, (where, e) in enumerate(exprs):
        e = e.replace("$__rate_interval", "1m").replace("$instance", ".*").replace("$guest", ".*")
        f.write(f"      - record: dashboard:query{i}\n        expr: {json.dumps(e)}\n")
if bad:
    sys.exit(1)
PY
promtool check rules "$TMP/rules.yml" || fail "a dashboard query is not valid PromQL"

# The man page and the README name every option each command's --help lists (no kernel needed).
man=$(sed 's/\\-/-/g' docs/vmexit.8)
for c in stat top stream record report serve; do
	opts=$("$OUT/vmexit" $c --help | grep -oE '^ +(-[a-z0-9?], )*--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+$')
	[ -n "$opts" ] || fail "vmexit $c --help lists no options (format changed?)"
	for o in $opts; do
		case $o in --help|--usage) continue ;; esac
		grep -qwF -- "$o" <<<"$man" || fail "docs/vmexit.8 does not describe $c's $o"
		grep -qwF -- "$o" README.md || fail "README.md does not name $c's $o"
	done
done
echo "PASS: test_contrib_files"
