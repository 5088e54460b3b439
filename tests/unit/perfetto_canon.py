#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One canonical line per process, track, slice, instant and counter value of a vmexit
Perfetto trace, whichever format it was written in, so that tests can compare the JSON and the
protobuf writers' traces of the same events line for line.

  perfetto_canon.py json TRACE.json
  perfetto_canon.py proto DECODED.txt   (protoc --decode=vmexit.perfetto.Trace ... output)

Lines: P|pid|name, T|pid|track, X|pid|track|ts|dur|cat|name|args,
I|scope|pid|track|ts|cat|name|args, C|pid|ts|counter|value, F|flow|out or in|pid|track|ts
(an end of a flow: record --wake's deliveries; times in ns, args with sorted keys,
numbers as numbers). Known differences of form are normalised: JSON writes 64-bit values as
hex or decimal strings and the protobuf as numbers; the protobuf leaves out the guest RIP and
exit information of exits to the VMM, which are zero there (as in stream --json). A flow's
end is a zero-length slice in JSON (bound by bind_id) and an instant in the protobuf (flow_ids,
terminating_flow_ids): both are the X line of a zero-length slice.
Exits 1 on anything it cannot read: a malformed trace must fail the test.
"""
import ast, decimal, json, re, sys

NO_GUEST_INFO = ('rip', 'info1', 'info2', 'intr_info', 'error_code')


def norm_json_args(args, cat):
    out = {}
    for k, v in (args or {}).items():
        if k.endswith('_hex'):
            continue
        if cat == 'kvm_userspace_exit' and k in NO_GUEST_INFO:
            continue
        if isinstance(v, str) and re.fullmatch(r'0x[0-9a-f]+', v):
            v = int(v, 16)
        elif isinstance(v, str) and re.fullmatch(r'-?[0-9]+', v):
            v = int(v)
        out[k] = v
    return json.dumps(out, sort_keys=True)


def num(v):
    return '%.9g' % float(v)


def ns(us):
    return int(decimal.Decimal(us) * 1000)


def from_json(path):
    t = json.load(open(path, encoding='utf-8'), parse_float=decimal.Decimal)
    procs, threads, lines = {}, {}, []
    for e in t:
        if e['ph'] == 'M' and e['name'] == 'process_name':
            procs[e['pid']] = e['args']['name']
        elif e['ph'] == 'M' and e['name'] == 'thread_name':
            threads[(e['pid'], e['tid'])] = e['args']['name']
    for e in t:
        ph = e['ph']
        if ph == 'X':
            lines.append('X|%d|%s|%d|%d|%s|%s|%s' % (
                e['pid'], threads[(e['pid'], e['tid'])], ns(e['ts']), ns(e['dur']), e['cat'],
                e['name'], norm_json_args(e.get('args'), e['cat'])))
            if 'bind_id' in e:
                if e.get('flow_in') == e.get('flow_out'):
                    raise ValueError('a flow end neither in nor out, or both: %r' % e)
                # A number, as Perfetto's importer reads it first (a string it reads as hex).
                if type(e['bind_id']) is not int:
                    raise ValueError('a flow id that is not a JSON number: %r' % e)
                lines.append('F|%d|%s|%d|%s|%d' % (
                    e['bind_id'], 'in' if e.get('flow_in') else 'out', e['pid'],
                    threads[(e['pid'], e['tid'])], ns(e['ts'])))
        elif ph == 'i':
            track = threads[(e['pid'], e['tid'])] if e['s'] == 't' else '-'
            lines.append('I|%s|%d|%s|%d|%s|%s|%s' % (
                e['s'], e['pid'], track, ns(e['ts']), e['cat'], e['name'],
                norm_json_args(e.get('args'), e['cat'])))
        elif ph == 'C':
            for k, v in e['args'].items():
                # vmexit's exit rates are one event of two series; outside counters one each
                series = k + '/s' if e['name'] == 'exits/s' else e['name']
                lines.append('C|%d|%d|%s|%s' % (e['pid'], ns(e['ts']), series, num(v)))
        elif ph != 'M':
            raise ValueError('unexpected event %r' % e)
    heads = ['P|%d|%s' % (p, n) for p, n in sorted(procs.items())]
    heads += sorted(set('T|%d|%s' % (k[0], n) for k, n in threads.items()))
    return heads + lines


def parse_text(path):
    """protoc's text format into nested dicts, every field a list."""
    root, stack = {}, []
    cur = root
    for raw in open(path, encoding='utf-8'):
        line = raw.strip()
        if not line:
            continue
        if line == '}':
            cur = stack.pop()
            continue
        m = re.fullmatch(r'(\w+) \{', line)
        if m:
            child = {}
            cur.setdefault(m.group(1), []).append(child)
            stack.append(cur)
            cur = child
            continue
        m = re.fullmatch(r'(\w+): (.*)', line)
        if not m:
            raise ValueError('cannot read line %r' % raw)
        v = m.group(2)
        if v.startswith('"'):
            v = ast.literal_eval('b' + v).decode('utf-8', 'replace')
        elif re.fullmatch(r'-?[0-9]+', v):
            v = int(v)
        cur.setdefault(m.group(1), []).append(v)
    if stack:
        raise ValueError('unbalanced braces')
    return root


def one(d, k, default=None):
    return d.get(k, [default])[0]


def from_proto(path):
    tracks, procs, interned, stacks, lines = {}, {}, {}, {}, []
    for p in parse_text(path).get('packet', []):
        if one(p, 'sequence_flags', 0) & 1:
            interned = {}
        for idata in p.get('interned_data', []):
            for kind, entries in idata.items():
                for ent in entries:
                    interned[(kind, one(ent, 'iid'))] = one(ent, 'name')
        for td in p.get('track_descriptor', []):
            tracks[one(td, 'uuid')] = td
            for pd in td.get('process', []):
                if 'process_name' in pd:  # a VM's track before its name is known
                    procs[one(pd, 'pid')] = one(pd, 'process_name')
        for te in p.get('track_event', []):
            ts = one(p, 'timestamp')
            uuid = one(te, 'track_uuid')
            td = tracks[uuid]
            parent = tracks.get(one(td, 'parent_uuid'))
            pid = one(one(parent, 'process'), 'pid') if parent else 0
            track = one(td, 'name') if parent else '-'
            typ = one(te, 'type')
            if typ == 'TYPE_SLICE_END':
                b = stacks[uuid].pop()
                lines.append('X|%d|%s|%d|%d|%s|%s|%s' % (pid, track, b[0], ts - b[0],
                                                         b[1], b[2], b[3]))
                continue
            if typ == 'TYPE_COUNTER':
                v = one(te, 'counter_value') if 'counter_value' in te else \
                    float(one(te, 'double_counter_value'))
                lines.append('C|%d|%d|%s|%s' % (pid, ts, one(td, 'name'), num(v)))
                continue
            cats = [interned[('event_categories', i)] for i in te.get('category_iids', [])]
            name = one(te, 'name') if 'name' in te else interned[('event_names',
                                                                  one(te, 'name_iid'))]
            args = {}
            for a in te.get('debug_annotations', []):
                k = interned[('debug_annotation_names', one(a, 'name_iid'))]
                for f in ('uint_value', 'int_value', 'pointer_value', 'string_value'):
                    if f in a:
                        args[k] = one(a, f)
                if 'bool_value' in a:
                    args[k] = one(a, 'bool_value') == 'true'
            args = json.dumps(args, sort_keys=True)
            if typ == 'TYPE_SLICE_BEGIN':
                stacks.setdefault(uuid, []).append((ts, cats[0], name, args))
            elif typ == 'TYPE_INSTANT' and ('flow_ids' in te or 'terminating_flow_ids' in te):
                lines.append('X|%d|%s|%d|0|%s|%s|%s' % (pid, track, ts, cats[0], name, args))
                for f in te.get('flow_ids', []):
                    lines.append('F|%d|out|%d|%s|%d' % (f, pid, track, ts))
                for f in te.get('terminating_flow_ids', []):
                    lines.append('F|%d|in|%d|%s|%d' % (f, pid, track, ts))
            elif typ == 'TYPE_INSTANT':
                lines.append('I|%s|%d|%s|%d|%s|%s|%s' % ('t' if parent else 'g', pid, track,
                                                         ts, cats[0], name, args))
            else:
                raise ValueError('unexpected event type %r' % typ)
    if any(stacks.values()):
        raise ValueError('slices begun and never ended')
    heads = ['P|%d|%s' % (p, n) for p, n in sorted(procs.items())]
    heads += sorted(set('T|%d|%s' % (one(one(tracks[one(td, 'parent_uuid')], 'process'), 'pid'),
                                     one(td, 'name'))
                        for td in tracks.values()
                        if 'parent_uuid' in td and 'counter' not in td))
    return heads + lines


if __name__ == '__main__':
    try:
        out = (from_json if sys.argv[1] == 'json' else from_proto)(sys.argv[2])
    except Exception as e:  # any unreadable trace is a failure, said in one line
        sys.exit('perfetto_canon: %s: %s: %s' % (sys.argv[2], type(e).__name__, e))
    sys.stdout.write(''.join(l + '\n' for l in out))
