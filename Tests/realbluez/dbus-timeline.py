#!/usr/bin/env python3
"""Compact timeline of a `dbus-monitor --system` capture (suite/dbus-monitor.txt):
one line per method call, return, error and org.bluez signal, with the time
relative to the first message, property names and short values.

  Tests/realbluez/dbus-timeline.py RUN_DIR/suite/dbus-monitor.txt [--grep TEXT] [--device PATH]

--device shortens that object path to DEV. Runs with any python3 (no dbus module).
"""
import argparse
import re

HEAD = re.compile(r'^(signal|method call|method return|error) time=([\d.]+) sender=(\S+) -> destination=(\S+)(.*)$')


def blocks(path):
    cur = None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = HEAD.match(line)
            if m:
                if cur:
                    yield cur
                cur = {'kind': m.group(1), 't': float(m.group(2)), 'sender': m.group(3),
                       'dest': m.group(4), 'rest': m.group(5), 'body': []}
            elif cur is not None:
                cur['body'].append(line.strip())
    if cur:
        yield cur


def field(rest, name):
    m = re.search(name + r'=([^;\s]+)', rest)
    return m.group(1) if m else ''


def props(body):
    """'Name=value' pairs of a PropertiesChanged / InterfacesAdded body, values shortened."""
    text = ' '.join(body)
    out = []
    for m in re.finditer(r'string "(\w+)"\s+variant\s+(object path|\w+)\s*("[^"]*"|[-\w.]+|\[)?', text):
        name, typ, val = m.group(1), m.group(2), m.group(3) or ''
        if typ == 'array':
            val = '[...]'
        out.append('%s=%s' % (name, val))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('capture')
    ap.add_argument('--grep')
    ap.add_argument('--device')
    a = ap.parse_args()
    t0 = None
    for b in blocks(a.capture):
        if b['sender'] == 'org.freedesktop.DBus' or b['dest'] == 'org.freedesktop.DBus':
            continue
        t0 = b['t'] if t0 is None else t0
        path, member, iface = field(b['rest'], 'path'), field(b['rest'], 'member'), field(b['rest'], 'interface')
        if b['kind'] == 'signal':
            if member == 'PropertiesChanged':
                m = re.search(r'string "([\w.]+)"', ' '.join(b['body']))
                desc = '%s %s %s' % (path, (m.group(1) if m else '').split('.')[-1], ' '.join(props(b['body'])))
            elif member in ('InterfacesAdded', 'InterfacesRemoved'):
                m = re.search(r'object path "([^"]+)"', ' '.join(b['body']))
                ifs = re.findall(r'string "(org\.bluez\.\w+)"', ' '.join(b['body']))
                desc = '%s %s %s' % (member, m.group(1) if m else '', ','.join(i.split('.')[-1] for i in ifs))
                if member == 'InterfacesAdded':
                    desc += ' ' + ' '.join(p for p in props(b['body']) if p.split('=')[0] in (
                        'UUID', 'Flags', 'Connected', 'ServicesResolved', 'RSSI', 'Name', 'Paired', 'AddressType'))
            else:
                desc = '%s %s' % (path, member)
            line = 'signal %s' % desc
        elif b['kind'] == 'method call':
            line = 'call   %s -> %s %s.%s %s' % (b['sender'], path, iface.split('.')[-1], member,
                                                  ' '.join(b['body'])[:120])
        elif b['kind'] == 'method return':
            line = 'return %s reply_serial=%s %s' % (b['dest'], field(b['rest'], 'reply_serial'), ' '.join(b['body'])[:80])
        else:
            line = 'error  %s %s %s' % (b['dest'], field(b['rest'], 'error_name'), ' '.join(b['body'])[:120])
        if a.device:
            line = line.replace(a.device, 'DEV')
        if a.grep and a.grep not in line:
            continue
        try:
            print('%8.3f %s' % (b['t'] - t0, line))
        except BrokenPipeError:
            return


if __name__ == '__main__':
    main()
