#!/bin/bash
# The shipped integration files, no kernel needed: `make install` puts the systemd unit where
# systemd looks, with the installed binary's path; systemd-analyze verify accepts it; the Grafana
# dashboard is dashboard JSON whose every query parses as PromQL (promtool check rules) and
# names only metrics vmexit serve exports; the alert rules pass promtool check rules and their
# promtool test cases, one that fires and one that must not per rule. $1: the build directory.
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
# The fields Grafana's dashboard schema defines (grafana/grafana kinds/dashboard/
# dashboard_kind.cue: the dashboard, #Panel and #FieldConfig are closed), and the values it
# allows, for the fields this dashboard uses. __inputs is an export's placeholder list: any
# one listed must be used as ${NAME}.
DASH = {"id", "uid", "title", "description", "revision", "gnetId", "tags", "style", "timezone",
        "editable", "graphTooltip", "time", "timepicker", "fiscalYearStartMonth", "liveNow",
        "weekStart", "refresh", "schemaVersion", "version", "panels", "templating",
        "annotations", "links", "snapshot", "__inputs", "__requires"}
PANEL = {"type", "id", "pluginVersion", "tags", "targets", "title", "description", "transparent",
         "datasource", "gridPos", "links", "repeat", "repeatDirection", "repeatPanelId",
         "maxDataPoints", "thresholds", "timeRegions", "transformations", "interval",
         "timeFrom", "timeShift", "libraryPanel", "options", "fieldConfig"}
FIELD = {"displayName", "displayNameFromDS", "description", "path", "writeable", "filterable",
         "unit", "decimals", "min", "max", "mappings", "thresholds", "color", "links", "noValue",
         "custom"}
VARTYPES = {"query", "adhoc", "constant", "datasource", "interval", "textbox", "custom", "system"}
text = open(sys.argv[1]).read()
need("dashboard: only schema fields", set(dash) <= DASH)
need("graphTooltip 0, 1 or 2", dash.get("graphTooltip", 0) in (0, 1, 2))
need("time {from, to}", set(dash.get("time", {})) <= {"from", "to"})
for i in dash.get("__inputs", []):
    need(f"__inputs {i['name']} used", "${" + i["name"] + "}" in text)
for v in dash["templating"]["list"]:
    need(f"variable {v['name']}: type, hide", v["type"] in VARTYPES and v.get("hide", 0) in (0, 1, 2))
for p in dash["panels"]:
    t = p.get("title")
    need(f"panel '{t}': only schema fields", set(p) <= PANEL)
    need(f"panel '{t}': field config", set(p.get("fieldConfig", {}).get("defaults", {})) <= FIELD
         and set(p.get("fieldConfig", {})) <= {"defaults", "overrides"})
    need(f"panel '{t}': datasource ref", set(p.get("datasource", {})) <= {"type", "uid"})
    need(f"panel '{t}': repeat", p.get("repeatDirection", "h") in ("h", "v")
         and p.get("repeat", "instance") in {v["name"] for v in dash["templating"]["list"]})
    g = p.get("gridPos", {})
    need(f"panel '{t}': grid", 0 < g.get("w", 0) <= 24 and 0 <= g.get("x", -1) < 24
         and g.get("h", 0) > 0 and g.get("y", -1) >= 0)
# A fleet has many hosts: every aggregation keeps instance (by it, or not without it), except in
# a panel repeated per instance, whose query names one.
AGG = re.compile(r"\b(sum|min|max|avg|count|group|stddev|stdvar|topk|bottomk|quantile)"
                 r"\s*(?:(by|without)\s*\(([^)]*)\))?\s*\(")
for p in dash["panels"]:
    for tg in p.get("targets", []):
        e = tg["expr"]
        for fn, how, labels in AGG.findall(e):
            keeps = (how == "by" and "instance" in labels.replace(" ", "").split(",")) or \
                    (how == "without" and "instance" not in labels)
            if not keeps and p.get("repeat") == "instance":
                keeps = 'instance=~"$instance"' in e
            need(f"panel '{p['title']}': {fn} {how or ''}({labels}) keeps instance", keeps)
        # unmatched_entry is benign (an exit begun before vmexit attached): not "lost".
        if "vmexit_lost_exits_total" in e:
            need(f"panel '{p['title']}': lost without unmatched_entry",
                 'cause!="unmatched_entry"' in e)
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

# The alert rules: valid, naming only exported metrics, and each with a promtool test case
# that must fire it and one that must not.
promtool check rules contrib/vmexit-alerts.yml || fail "contrib/vmexit-alerts.yml is not valid"
$PY - contrib/vmexit-alerts.yml tests/contrib/vmexit-alerts.test.yml "$TMP/text.prom" <<'PY' ||
import re, sys, yaml
rules = [r for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"]]
tests = yaml.safe_load(open(sys.argv[2]))["tests"]
exported = {l.split()[2] for l in open(sys.argv[3]) if l.startswith("# TYPE ")}
bad = []
for r in rules:
    name = r["alert"]
    cases = [c for t in tests for c in t.get("alert_rule_test", []) if c["alertname"] == name]
    fires = any(c.get("exp_alerts") for c in cases)
    quiet = any(not c.get("exp_alerts") for c in cases)
    names = [n for n in re.findall(r"\b(?:vmexit|process)_[a-z_]+", r["expr"])
             if n not in exported and re.sub(r"_(bucket|sum|count)$", "", n) not in exported]
    print(f"{name}: a case that fires: {fires}, one that must not: {quiet}, unexported: {names}")
    if not (fires and quiet) or names:
        bad.append(name)
sys.exit(1 if bad else 0)
PY
	fail "an alert rule lacks a firing or a quiet test case, or names a metric serve lacks"
promtool test rules tests/contrib/vmexit-alerts.test.yml || fail "promtool test rules failed"

# The man page and the README name every option each command's --help lists (no kernel needed).
man=$(sed 's/\\-/-/g' docs/vmexit.8)
for c in stat top stream record report serve diff explain; do
	opts=$("$OUT/vmexit" $c --help | grep -oE '^ +(-[a-z0-9?], )*--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+$')
	[ -n "$opts" ] || fail "vmexit $c --help lists no options (format changed?)"
	for o in $opts; do
		case $o in --help|--usage) continue ;; esac
		grep -qwF -- "$o" <<<"$man" || fail "docs/vmexit.8 does not describe $c's $o"
		grep -qwF -- "$o" README.md || fail "README.md does not name $c's $o"
	done
done
echo "PASS: test_contrib_files"
