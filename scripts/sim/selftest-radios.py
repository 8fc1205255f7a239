#!/usr/bin/python3
"""Checks several radios on two simulators it starts itself (scripts/sim/start-sim, $BLUEZ_SIM or
.build/debug/bluez-sim) with scripts/sim/radios.yaml and one shared --link-dir:

  device objects per adapter, each with its RSSI, never under an adapter that does not hear the
  peripheral; SetRSSI at run time; one link per peripheral across adapters and simulators (a Connect
  elsewhere fails with le-connection-abort-by-local at the connect timeout); GetStats links and
  per-adapter counters; the adapter in the write log; DropAllConnections; a peripheral silent while
  linked; a power-off dropping its adapter's links; a SIGKILLed simulator releasing its links.

    scripts/sim/selftest-radios.py          # ~10 s; prints one line per check, non-zero on failure
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import *  # noqa: E402,F401,F403


HERE = os.path.dirname(os.path.abspath(__file__))
LOCK, GARDEN, TAG = 'C0:FF:EE:00:00:01', 'C0:FF:EE:00:00:02', 'C0:FF:EE:00:00:03'
LOCK_W = '5e1f0002-b5a3-4c1d-9e0a-ec40ec40ec40'
ABORT = ('org.bluez.Error.Failed', 'le-connection-abort-by-local')


def dev(adapter, address):
    return '/org/bluez/%s/dev_%s' % (adapter, address.replace(':', '_'))


class Sim:
    def __init__(self, work, name, links):
        self.dir = os.path.join(work, name)
        self.address = subprocess.run(
            [os.path.join(HERE, 'start-sim'), self.dir, os.path.join(HERE, 'radios.yaml'), '--link-dir', links],
            check=True, capture_output=True, text=True).stdout.strip()
        self.bus = dbus.bus.BusConnection(self.address)
        self.rssi = {}   # path -> RSSI values signalled
        self.bus.add_signal_receiver(self._changed, 'PropertiesChanged', PROPS, B, path_keyword='path')

    def _changed(self, iface, changed, invalidated, path=None):
        if 'RSSI' in changed:
            self.rssi.setdefault(str(path), []).append(int(changed['RSSI']))

    def obj(self, path, iface):
        return dbus.Interface(self.bus.get_object(B, path), iface)

    def paths(self):  # noqa: D102
        return set(str(p) for p in self.obj('/', OM).GetManagedObjects())

    def prop(self, path, iface, name):
        return self.obj(path, PROPS).Get(iface, name)

    def connect(self, path):
        t0 = time.time()
        return error_of(lambda: self.obj(path, DEV).Connect(timeout=20)), time.time() - t0

    def simctl(self, *argv):
        r = subprocess.run([os.path.join(HERE, 'simctl'), '--bus', self.address] + list(argv),
                           capture_output=True, text=True)
        return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else r.returncode

    def stop(self):
        subprocess.run([os.path.join(HERE, 'stop'), self.dir])


def main():
    work = tempfile.mkdtemp(prefix='bluez-sim-radios.')
    links = os.path.join(work, 'links')
    a = Sim(work, 'a', links)
    b = Sim(work, 'b', links)
    try:
        run(a, b, links)
    finally:
        a.stop()
        b.stop()
    print('%d failure(s)' % len(failures))
    return 1 if failures else 0


def run(a, b, links):
    # --- device objects per adapter
    check('known peripheral under both adapters', {dev('hci0', LOCK), dev('hci1', LOCK)} <= a.paths())
    for hci in ('hci0', 'hci1'):
        a.obj('/org/bluez/' + hci, ADAPTER).StartDiscovery()
    spin(lambda: dev('hci1', GARDEN) in a.paths() and len(a.rssi.get(dev('hci0', TAG), [])) >= 4, 5)
    check('Garden under hci1 only', dev('hci1', GARDEN) in a.paths() and dev('hci0', GARDEN) not in a.paths())
    at0, at1 = a.rssi.get(dev('hci0', LOCK), []), a.rssi.get(dev('hci1', LOCK), [])
    check('RSSI per adapter', at0 and at1 and all(-68 <= v <= -52 for v in at0) and all(-83 <= v <= -67 for v in at1),
          '%s %s' % (at0, at1))

    # --- SetRSSI at run time
    check('SetRSSI', a.simctl('SetRSSI', LOCK, 'hci1', '-40') == 0)
    mark = len(a.rssi.get(dev('hci1', LOCK), []))
    spin(lambda: any(v >= -48 for v in a.rssi.get(dev('hci1', LOCK), [])[mark:]), 3)
    check('RSSI follows SetRSSI', any(v >= -48 for v in a.rssi.get(dev('hci1', LOCK), [])[mark:]),
          str(a.rssi.get(dev('hci1', LOCK), [])[mark:]))
    check('SetRSSI on a deaf adapter refused', a.simctl('SetRSSI', GARDEN, 'hci0', '-40') == 1)

    # --- one link per peripheral, across adapters and simulators
    err, _ = a.connect(dev('hci1', LOCK))
    check('connect through hci1', err is None, str(err))
    check('links name the adapter', a.simctl('GetStats', 'links') == {LOCK: 'hci1'})
    check('per-adapter connects', a.simctl('GetStats', 'adapters', 'hci1', 'connects') == 1
          and a.simctl('GetStats', 'adapters', 'hci0', 'connects') == 0)
    chrc = [p for p, i in a.obj('/', OM).GetManagedObjects().items()
            if p.startswith(dev('hci1', LOCK) + '/') and str(i.get(CHRC, {}).get('UUID', '')) == LOCK_W]
    check('characteristic under hci1', len(chrc) == 1)
    a.obj(chrc[0], CHRC).WriteValue([7], {'type': 'request'})
    lines = open(os.path.join(a.dir, 'writes.log')).read().split('\n')
    check('write log names the adapter', any(l.split()[1:] == [LOCK, LOCK_W, 'request', '0', '07', 'hci1'] for l in lines),
          str(lines[-2:]))
    err, took = a.connect(dev('hci0', LOCK))
    check('other adapter: not answered', err == ABORT and took >= 0.9, '%s %.2f s' % (err, took))
    err, took = b.connect(dev('hci0', LOCK))
    check('other simulator: not answered', err == ABORT and took >= 0.9, '%s %.2f s' % (err, took))
    check('lock file names the holder', open(os.path.join(links, 'dev_C0_FF_EE_00_00_01.lock')).read().split()[1] == 'hci1')
    check('link_conflicts counted', b.simctl('GetStats', 'link_conflicts') == 1)
    a.simctl('DropAllConnections')
    check('DropAllConnections', a.prop(dev('hci1', LOCK), DEV, 'Connected') == False)  # noqa: E712
    err, _ = b.connect(dev('hci0', LOCK))
    check('other simulator connects once the link is gone', err is None, str(err))

    # --- a silent linked peripheral; power off; a killed simulator
    err, _ = b.connect(dev('hci1', TAG))
    check('connect Tag on the second simulator', err is None, str(err))
    pause(0.3)  # the signals queued while Connect blocked
    mark = len(a.rssi.get(dev('hci0', TAG), []))
    garden = len(a.rssi.get(dev('hci1', GARDEN), []))
    spin(lambda: len(a.rssi.get(dev('hci1', GARDEN), [])) >= garden + 5, 3)
    check('linked Tag is silent', len(a.rssi.get(dev('hci0', TAG), [])) <= mark + 1)
    check('power off', b.simctl('SetAdapterPowered', 'hci0', 'false') == 0)
    spin(lambda: b.prop(dev('hci0', LOCK), DEV, 'Connected') == False, 3)  # noqa: E712
    check('power off drops the link, keeps the object', b.prop(dev('hci0', LOCK), DEV, 'Connected') == False  # noqa: E712
          and dev('hci0', LOCK) in b.paths())
    check('Tag still linked through hci1', b.simctl('GetStats', 'links') == {TAG: 'hci1'})
    os.kill(int(open(os.path.join(b.dir, 'bluez-sim.pid')).read()), signal.SIGKILL)
    spin(lambda: len(a.rssi.get(dev('hci0', TAG), [])) >= mark + 3, 3)
    check('killed simulator: Tag advertises again', len(a.rssi.get(dev('hci0', TAG), [])) >= mark + 3)
    err, _ = a.connect(dev('hci0', TAG))
    check('killed simulator: its link is free', err is None, str(err))


if __name__ == '__main__':
    sys.exit(main())
