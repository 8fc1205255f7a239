#!/usr/bin/python3
"""Assertion helpers for the realbluez suite (run INSIDE the VM with Debian's
/usr/bin/python3 + python3-dbus; standard library otherwise).

Every subcommand exits 0 when its expectation holds and prints a one-line
summary as its LAST line; otherwise it exits 1 and its last line is the
reason (lib.sh's `check` shows that line).

The MQTT recorder log (lib.sh: `mosquitto_sub -F '%U %j'`) has one message per
line: "<unix time with ns> <JSON: tst, topic, qos, retain, payloadlen, payload>".

  rbtool.py wait LOG TOPIC N TIMEOUT        wait for N messages on TOPIC (exact or +/# filter); print them
  rbtool.py last LOG TOPIC                  print the last payload on TOPIC (exit 1 if none)
  rbtool.py hr LOG TOPIC N [--min-interval S] [--max-interval S] [--max-gap S]
                                            heart rate measurements: `value` decodes `raw`, ~1 Hz
  rbtool.py uint8 LOG TOPIC [--raw HEX] [--min V] [--max V]
                                            every message: value == int(raw byte) (2A19, 2A38)
  rbtool.py json PAYLOAD EXPR [WHAT]        EXPR (Python, `v` = the parsed payload) must be true
  rbtool.py devices PAYLOAD NAME ADDRESS [--connected true|false] [--service SEG]...
                                            bridge/devices array holds that device
  rbtool.py dbus-wait PATH IFACE PROP VALUE TIMEOUT
                                            wait until a BlueZ property equals VALUE (JSON literal)
  rbtool.py dbus-get PATH IFACE PROP        print a BlueZ property as JSON
  rbtool.py dbus-tree PATH OUT              write every BlueZ object under PATH (interfaces, properties) as JSON
  rbtool.py render TEMPLATE OUT             expand ${VAR} from the environment (missing = error)
"""
import argparse
import json
import os
import re
import sys
import time


def die(msg):
    print(' '.join(str(msg).split()))
    sys.exit(1)


def ok(msg):
    print(msg)
    sys.exit(0)


# ---------------------------------------------------------------- MQTT log

def topic_matches(pattern, topic):
    p, t = pattern.split('/'), topic.split('/')
    for i, seg in enumerate(p):
        if seg == '#':
            return True
        if i >= len(t) or (seg != '+' and seg != t[i]):
            return False
    return len(p) == len(t)


def read_log(path, topic):
    """[(time, topic, payload str, retain)] for the messages matching topic."""
    out = []
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                ts, _, rest = line.partition(' ')
                try:
                    m = json.loads(rest)
                    t = float(ts)
                except ValueError:
                    continue
                if topic_matches(topic, m.get('topic', '')):
                    payload = m.get('payload')
                    if not isinstance(payload, str):
                        payload = json.dumps(payload)
                    out.append((t, m['topic'], payload, m.get('retain', 0)))
    except FileNotFoundError:
        pass
    return out


def wait_for(path, topic, n, timeout):
    end = time.time() + timeout
    msgs = read_log(path, topic)
    while len(msgs) < n and time.time() < end:
        time.sleep(0.1)
        msgs = read_log(path, topic)
    return msgs


def parse_payload(payload, what):
    try:
        v = json.loads(payload)
    except ValueError as e:
        die('%s: payload is not JSON (%s): %r' % (what, e, payload[:200]))
    if not isinstance(v, dict):
        die('%s: payload is not a JSON object: %r' % (what, payload[:200]))
    return v


def raw_bytes(v, what):
    raw = v.get('raw')
    if not isinstance(raw, str):
        die('%s: no "raw" string in %s' % (what, json.dumps(v)))
    if not re.fullmatch(r'([0-9a-f]{2})*', raw):
        die('%s: "raw" is not lowercase hex of whole bytes: %r' % (what, raw))
    if 'value' not in v:
        die('%s: no "value" in %s' % (what, json.dumps(v)))
    return bytes.fromhex(raw)


def cmd_last(a):
    msgs = read_log(a.log, a.topic)
    if not msgs:
        die('no message on %s' % a.topic)
    print(msgs[-1][2])


def cmd_wait(a):
    msgs = wait_for(a.log, a.topic, a.n, a.timeout)
    for t, topic, payload, _ in msgs:
        print('%.3f %s %s' % (t, topic, payload))
    if len(msgs) < a.n:
        die('only %d of %d message(s) on %s within %gs' % (len(msgs), a.n, a.topic, a.timeout))
    ok('%d message(s) on %s' % (len(msgs), a.topic))


# ---------------------------------------------------------------- heart rate

def decode_hr(b):
    """Heart Rate Measurement (GATT spec 3.106), decoded on our own: the expected `value`."""
    if len(b) < 2:
        raise ValueError('shorter than 2 bytes')
    flags, i = b[0], 1
    if flags & 0x01:
        if len(b) < 3:
            raise ValueError('uint16 bpm flag but only %d bytes' % len(b))
        bpm, i = b[1] | b[2] << 8, 3
    else:
        bpm, i = b[1], 2
    out = {'bpm': bpm}
    if flags & 0x04:                       # sensor contact feature supported
        out['contact'] = bool(flags & 0x02)
    if flags & 0x08:                       # energy expended present (kJ)
        if len(b) < i + 2:
            raise ValueError('energy flag but too short')
        out['energy'] = b[i] | b[i + 1] << 8
        i += 2
    if flags & 0x10:                       # RR intervals, 1/1024 s
        rr = []
        while i + 1 < len(b):
            rr.append((b[i] | b[i + 1] << 8) / 1024.0)
            i += 2
        out['rr'] = rr
    return out


def same_hr(got, want):
    if not isinstance(got, dict) or set(got) != set(want):
        return False
    for k, w in want.items():
        g = got[k]
        if k == 'rr':
            if not isinstance(g, list) or len(g) != len(w) or \
               any(not isinstance(x, (int, float)) or abs(x - y) > 0.0015 for x, y in zip(g, w)):
                return False
        elif k == 'contact':
            if g is not w:
                return False
        elif isinstance(g, bool) or g != w:
            return False
    return True


def cmd_hr(a):
    msgs = read_log(a.log, a.topic)
    if a.after_online:
        # The rate from the first `online` of the device on: a value or two may come from a
        # connection of the setup that BlueZ dropped (an encrypted read without a bond).
        on = [m[0] for m in read_log(a.log, a.after_online) if m[2] == 'online']
        if not on:
            die('no online on %s' % a.after_online)
        msgs = [m for m in msgs if m[0] >= on[0]][:a.n]
    if len(msgs) < a.n:
        die('only %d of %d heart rate messages on %s' % (len(msgs), a.n, a.topic))
    bpms, energy = [], 0
    for k, (t, _, payload, _) in enumerate(msgs):
        what = 'message %d on %s' % (k + 1, a.topic)
        v = parse_payload(payload, what)
        b = raw_bytes(v, what)
        try:
            want = decode_hr(b)
        except ValueError as e:
            die('%s: raw %s is no heart rate measurement: %s' % (what, v['raw'], e))
        if not same_hr(v['value'], want):
            die('%s: value %s does not match raw %s (expected %s)' % (
                what, json.dumps(v['value']), v['raw'], json.dumps(want)))
        bpms.append(want['bpm'])
        energy += 'energy' in want
    times = [m[0] for m in msgs]
    gaps = [y - x for x, y in zip(times, times[1:])]
    mean = (times[-1] - times[0]) / len(gaps) if gaps else 0.0
    if gaps and not (a.min_interval <= mean <= a.max_interval):
        die('mean interval %.2fs over %d messages, expected %g..%gs (gaps %s)' % (
            mean, len(msgs), a.min_interval, a.max_interval, ' '.join('%.2f' % g for g in gaps)))
    if gaps and max(gaps) > a.max_gap:
        die('a gap of %.2fs between heart rate messages (max %gs; gaps %s)' % (
            max(gaps), a.max_gap, ' '.join('%.2f' % g for g in gaps)))
    ok('%d messages, mean interval %.2fs (max gap %.2fs), bpm %d..%d, %d with energy, all decode' % (
        len(msgs), mean, max(gaps) if gaps else 0, min(bpms), max(bpms), energy))


def cmd_uint8(a):
    msgs = read_log(a.log, a.topic)
    if not msgs:
        die('no message on %s' % a.topic)
    vals = []
    for k, (_, _, payload, _) in enumerate(msgs):
        what = 'message %d on %s' % (k + 1, a.topic)
        v = parse_payload(payload, what)
        b = raw_bytes(v, what)
        if len(b) != 1:
            die('%s: raw %r is not one byte' % (what, v['raw']))
        if a.raw is not None and v['raw'] != a.raw:
            die('%s: raw %r, expected %r' % (what, v['raw'], a.raw))
        val = v['value']
        if isinstance(val, bool) or not isinstance(val, int) or val != b[0]:
            die('%s: value %s, expected the integer %d (raw %s)' % (what, json.dumps(val), b[0], v['raw']))
        if not (a.min <= val <= a.max):
            die('%s: value %d out of %d..%d' % (what, val, a.min, a.max))
        vals.append(val)
    ok('%d message(s), values %s' % (len(vals), ' '.join(map(str, vals[:10]))))


# ---------------------------------------------------------------- JSON payloads

def cmd_json(a):
    what = a.what or a.expr
    try:
        v = json.loads(a.payload)
    except ValueError as e:
        die('%s: payload is not JSON (%s): %r' % (what, e, a.payload[:200]))
    try:
        res = eval(a.expr, {'json': json, 're': re}, {'v': v})
    except Exception as e:  # noqa: BLE001 - the reason is what we report
        die('%s: %s: %s in %s' % (what, type(e).__name__, e, a.payload[:300]))
    if not res:
        die('%s: not true for %s' % (what, a.payload[:300]))
    ok('%s: ok' % what)


def cmd_devices(a):
    try:
        arr = json.loads(a.payload)
    except ValueError as e:
        die('bridge/devices is not JSON (%s): %r' % (e, a.payload[:200]))
    if not isinstance(arr, list):
        die('bridge/devices is not a JSON array: %s' % a.payload[:300])
    mine = [d for d in arr if isinstance(d, dict) and str(d.get('address', '')).upper() == a.address.upper()]
    if not mine:
        die('bridge/devices has no device with address %s: %s' % (a.address, a.payload[:300]))
    d = mine[0]
    problems = []
    for key in ('name', 'address', 'address_type', 'connected', 'rssi', 'services'):
        if key not in d:
            problems.append('no "%s"' % key)
    if d.get('name') != a.name:
        problems.append('name %r, expected %r' % (d.get('name'), a.name))
    if d.get('address') != a.address.upper():
        problems.append('address %r, expected %r' % (d.get('address'), a.address.upper()))
    if d.get('address_type') not in ('public', 'random'):
        problems.append('address_type %r' % d.get('address_type'))
    if a.connected is not None and d.get('connected') is not (a.connected == 'true'):
        problems.append('connected %r, expected %s' % (d.get('connected'), a.connected))
    rssi = d.get('rssi')
    if rssi is not None and (isinstance(rssi, bool) or not isinstance(rssi, int)):
        problems.append('rssi %r is neither null nor an integer' % rssi)
    svcs = d.get('services')
    if not isinstance(svcs, list):
        problems.append('services %r is not an array' % svcs)
    else:
        for s in a.service or []:
            if s not in svcs:
                problems.append('services %s lacks %r' % (json.dumps(svcs), s))
    if problems:
        die('bridge/devices entry %s: %s' % (json.dumps(d), '; '.join(problems)))
    ok('bridge/devices: %s' % json.dumps(d))


# ---------------------------------------------------------------- BlueZ over D-Bus

def dbus_prop(path, iface, prop):
    import dbus  # python3-dbus, only in Debian's /usr/bin/python3
    bus = dbus.SystemBus()
    props = dbus.Interface(bus.get_object('org.bluez', path), 'org.freedesktop.DBus.Properties')
    return plain(props.Get(iface, prop))


def plain(v):
    import dbus
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return int(v)
    if isinstance(v, (dbus.String, dbus.ObjectPath)):
        return str(v)
    if isinstance(v, dbus.Array):
        return [plain(x) for x in v]
    if isinstance(v, dbus.Dictionary):
        return {str(k): plain(x) for k, x in v.items()}
    return v


def cmd_dbus_get(a):
    try:
        ok(json.dumps(dbus_prop(a.path, a.iface, a.prop)))
    except Exception as e:  # noqa: BLE001
        die('%s %s.%s: %s' % (a.path, a.iface, a.prop, e))


def cmd_dbus_wait(a):
    want = json.loads(a.value)
    end = time.time() + a.timeout
    got, err = None, None
    while True:
        try:
            got, err = dbus_prop(a.path, a.iface, a.prop), None
        except Exception as e:  # noqa: BLE001
            err = str(e)
        if err is None and got == want:
            ok('%s %s = %s' % (a.path, a.prop, json.dumps(got)))
        if time.time() >= end:
            break
        time.sleep(0.2)
    die('%s %s.%s is %s after %gs, expected %s' % (
        a.path, a.iface.split('.')[-1], a.prop, err if err else json.dumps(got), a.timeout, a.value))


def cmd_dbus_tree(a):
    """Every BlueZ object at or under PATH with its interfaces and properties, as JSON."""
    import dbus
    bus = dbus.SystemBus()
    om = dbus.Interface(bus.get_object('org.bluez', '/'), 'org.freedesktop.DBus.ObjectManager')
    out = {}
    for path, ifs in sorted(om.GetManagedObjects().items()):
        if str(path) == a.path or str(path).startswith(a.path + '/'):
            out[str(path)] = {str(i): {str(k): plain(v) for k, v in props.items()} for i, props in ifs.items()}
    with open(a.out, 'w') as f:
        json.dump(out, f, indent=1, sort_keys=True)
    ok('%d objects under %s -> %s' % (len(out), a.path, a.out))


# ---------------------------------------------------------------- config template

def cmd_render(a):
    text = open(a.template).read()
    missing = []

    def sub(m):
        name = m.group(1)
        if name not in os.environ:
            missing.append(name)
            return m.group(0)
        return os.environ[name]
    out = re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}', sub, text)
    if missing:
        die('%s: unset variable(s) %s' % (a.template, ', '.join(sorted(set(missing)))))
    with open(a.out, 'w') as f:
        f.write(out)
    ok('wrote %s' % a.out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('wait')
    s.add_argument('log'), s.add_argument('topic'), s.add_argument('n', type=int), s.add_argument('timeout', type=float)
    s.set_defaults(fn=cmd_wait)
    s = sub.add_parser('last')
    s.add_argument('log'), s.add_argument('topic')
    s.set_defaults(fn=cmd_last)
    s = sub.add_parser('hr')
    s.add_argument('log'), s.add_argument('topic'), s.add_argument('n', type=int)
    s.add_argument('--min-interval', type=float, default=0.5)
    s.add_argument('--max-interval', type=float, default=1.6)
    s.add_argument('--max-gap', type=float, default=3.0)
    s.add_argument('--after-online', help='only messages after the first online on this availability topic')
    s.set_defaults(fn=cmd_hr)
    s = sub.add_parser('uint8')
    s.add_argument('log'), s.add_argument('topic')
    s.add_argument('--raw'), s.add_argument('--min', type=int, default=0), s.add_argument('--max', type=int, default=255)
    s.set_defaults(fn=cmd_uint8)
    s = sub.add_parser('json')
    s.add_argument('payload'), s.add_argument('expr'), s.add_argument('what', nargs='?')
    s.set_defaults(fn=cmd_json)
    s = sub.add_parser('devices')
    s.add_argument('payload'), s.add_argument('name'), s.add_argument('address')
    s.add_argument('--connected', choices=['true', 'false'])
    s.add_argument('--service', action='append')
    s.set_defaults(fn=cmd_devices)
    s = sub.add_parser('dbus-get')
    s.add_argument('path'), s.add_argument('iface'), s.add_argument('prop')
    s.set_defaults(fn=cmd_dbus_get)
    s = sub.add_parser('dbus-wait')
    s.add_argument('path'), s.add_argument('iface'), s.add_argument('prop'), s.add_argument('value')
    s.add_argument('timeout', type=float)
    s.set_defaults(fn=cmd_dbus_wait)
    s = sub.add_parser('dbus-tree')
    s.add_argument('path'), s.add_argument('out')
    s.set_defaults(fn=cmd_dbus_tree)
    s = sub.add_parser('render')
    s.add_argument('template'), s.add_argument('out')
    s.set_defaults(fn=cmd_render)
    a = p.parse_args()
    a.fn(a)


if __name__ == '__main__':
    main()
