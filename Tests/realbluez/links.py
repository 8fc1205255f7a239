#!/usr/bin/python3
"""Links of one peripheral to several central adapters, over time (checks/80-adapters.sh).
Runs INSIDE the VM with Debian's /usr/bin/python3 + python3-dbus + python3-gi.

  links.py sample OUT NAME=PATH...   until SIGTERM: every 0.1 s, Device1.Connected of each PATH
                                     (Get: bluetoothd 5.66 does not signal Connected: true on a
                                     central's object, README "Real BlueZ 5.66"), and every
                                     PropertiesChanged {Connected} of those paths as it arrives;
                                     one line each to OUT:
                                       <unix t> sample NAME=1|0|- ...   (- : no such object)
                                       <unix t> signal NAME 1|0
  links.py analyze OUT GROUP... [--move FROM TO]
                                     GROUP = NAME,NAME: the objects of one side whose links must
                                     never be up at once (the central side: the peripheral's
                                     object on each central adapter; the peripheral side: the
                                     peripheral adapter's object of each central). Fails when a
                                     sample, or the state rebuilt from the signals between
                                     samples, has two of a group connected. --move: a sample has
                                     FROM connected and a later one TO (the samples cover a
                                     move). Last line: the summary.
  links.py steady OUT T0 SECONDS NAME=V...
                                     every sample in the SECONDS after unix time T0 (waits for
                                     them) has NAME=V for each NAME given (V: 1, 0 or -, or
                                     several separated by |, e.g. 0|-)
"""
import signal
import sys
import time


def die(msg):
    print(' '.join(str(msg).split()))
    sys.exit(1)


def sample(out, specs):
    import dbus
    import dbus.mainloop.glib
    from gi.repository import GLib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    names = {}
    for spec in specs:
        name, path = spec.split('=', 1)
        names[path] = name
    f = open(out, 'a', buffering=1)

    def get(path):
        try:
            props = dbus.Interface(bus.get_object('org.bluez', path), 'org.freedesktop.DBus.Properties')
            return '1' if bool(props.Get('org.bluez.Device1', 'Connected')) else '0'
        except dbus.exceptions.DBusException:
            return '-'

    def tick():
        f.write('%.6f sample %s\n' % (time.time(), ' '.join('%s=%s' % (n, get(p)) for p, n in names.items())))
        return True

    def changed(iface, props, _inval, path=None):
        if iface == 'org.bluez.Device1' and 'Connected' in props and str(path) in names:
            f.write('%.6f signal %s %s\n' % (time.time(), names[str(path)], '1' if bool(props['Connected']) else '0'))

    bus.add_signal_receiver(changed, dbus_interface='org.freedesktop.DBus.Properties',
                            signal_name='PropertiesChanged', bus_name='org.bluez', path_keyword='path')
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, lambda: loop.quit() or False)
    tick()
    GLib.timeout_add(100, tick)
    loop.run()
    tick()
    f.close()


def analyze(out, args):
    move = None
    if '--move' in args:
        i = args.index('--move')
        move, args = args[i + 1:i + 3], args[:i] + args[i + 3:]
    groups = [g.split(',') for g in args]
    from_at = moved_at = None
    state = {}
    n_samples = n_signals = 0
    first = last = None
    bad = []
    ups = {}          # name -> number of times it went from 0 to 1 (sampled or signalled)
    seen = set()
    try:
        lines = open(out).read().splitlines()
    except FileNotFoundError:
        die('no samples: %s does not exist (the sampler did not run)' % out)

    def note(t, name, v, how):
        if v == '1' and state.get(name) != '1':
            ups[name] = ups.get(name, 0) + 1
        state[name] = v
        seen.add(name)
        for g in groups:
            up = [n for n in g if state.get(n) == '1']
            if len(up) > 1:
                bad.append('%.3f (%s): %s connected at once' % (t, how, ' and '.join(up)))

    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        t = float(parts[0])
        first = t if first is None else first
        last = t
        if parts[1] == 'sample':
            n_samples += 1
            vals = dict(kv.split('=', 1) for kv in parts[2:])
            if move and from_at is None and vals.get(move[0]) == '1':
                from_at = t
            if move and from_at is not None and moved_at is None and vals.get(move[1]) == '1':
                moved_at = t
            for name, v in vals.items():
                note(t, name, v, 'sample')
        elif parts[1] == 'signal' and len(parts) == 4:
            n_signals += 1
            note(t, parts[2], parts[3], 'signal')
    if n_samples < 2:
        die('only %d sample(s) in %s: the sampler did not run' % (n_samples, out))
    for b in bad[:5]:
        print('TWO LINKS at %s' % b)
    summary = '%d samples and %d Connected signals over %.1fs; links up (0->1): %s' % (
        n_samples, n_signals, last - first, ', '.join('%s %d' % (n, ups.get(n, 0)) for g in groups for n in g))
    if not ups:
        die('no link seen at all (every object disconnected or absent): %s' % summary)
    if move and from_at is None:
        die('no sample with %s=1: the samples do not cover the link before the move; %s' % (move[0], summary))
    if move and moved_at is None:
        die('no sample with %s=1 after one with %s=1: the samples do not cover the move; %s' % (
            move[1], move[0], summary))
    if bad:
        die('%d moment(s) with two links, the first at %s; %s' % (len(bad), bad[0], summary))
    print('never two links at once: %s' % summary)


def steady(out, t0, seconds, wants):
    """Every sample from t0 for `seconds` (waits for them) has NAME=V for each of wants."""
    t0, seconds = float(t0), float(seconds)
    want = dict(w.split('=', 1) for w in wants)
    deadline = time.time() + seconds + 30

    def samples():
        got = []
        try:
            for line in open(out).read().splitlines():
                parts = line.split()
                if len(parts) >= 3 and parts[1] == 'sample' and float(parts[0]) >= t0:
                    got.append((float(parts[0]), dict(kv.split('=', 1) for kv in parts[2:])))
        except FileNotFoundError:
            pass
        return got

    got = samples()
    while (not got or got[-1][0] < t0 + seconds) and time.time() < deadline:
        time.sleep(0.5)
        got = samples()
    got = [g for g in got if g[0] <= t0 + seconds]
    if not got or got[-1][0] < t0 + seconds - 1:
        die('only %d sample(s) in the %gs after t0 (the sampler stopped?)' % (len(got), seconds))
    for t, vals in got:
        off = ['%s=%s' % (n, vals.get(n)) for n, v in want.items() if vals.get(n) not in v.split('|')]
        if off:
            die('+%.1fs after t0: %s (expected %s)' % (t - t0, ' '.join(off), ' '.join(wants)))
    print('%d samples over %gs after t0: %s throughout' % (len(got), seconds, ' '.join(wants)))


if __name__ == '__main__':
    cmds = {'sample': lambda a: sample(a[0], a[1:]), 'analyze': lambda a: analyze(a[0], a[1:]),
            'steady': lambda a: steady(a[0], a[1], a[2], a[3:])}
    if len(sys.argv) < 4 or sys.argv[1] not in cmds:
        die(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])
