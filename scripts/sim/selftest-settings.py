#!/usr/bin/python3
"""Checks the scenario settings that restore bluez-sim's pre-5.66-fidelity behaviour, on a sim it
starts itself (scripts/sim/start-sim, $BLUEZ_SIM or .build/debug/bluez-sim) with realbluez.yaml
plus `signal_connected: true`, `gatt_objects_first: true` and fast timings:

  Connect emits PropertiesChanged {Connected: true}; every GATT object is exported before
  ServicesResolved: true; the timing settings apply (connect_delay, resolve_delay, disconnect_delay,
  pairing_failure_delay).

    scripts/sim/selftest-settings.py          # ~5 s; prints one line per check, non-zero on failure
"""
import os
import subprocess
import sys
import tempfile
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import *  # noqa: E402,F401,F403


HERE = os.path.dirname(os.path.abspath(__file__))
DEV, CHRC = 'org.bluez.Device1', 'org.bluez.GattCharacteristic1'
HCI = '/org/bluez/hci1'
DEV_PATH = HCI + '/dev_00_AA_01_00_00_00'


def main():
    work = tempfile.mkdtemp(prefix='bluez-sim-settings.')
    scenario = open(os.path.join(HERE, 'realbluez.yaml')).read().replace('settings:\n', (
        'settings:\n  signal_connected: true\n  gatt_objects_first: true\n  connect_delay: 100ms\n'
        '  resolve_delay: 200ms\n  resolve_delay_cached: 50ms\n  disconnect_delay: 100ms\n'
        '  pairing_failure_delay: 50ms\n'), 1)
    path = os.path.join(work, 'legacy.yaml')
    open(path, 'w').write(scenario)
    address = subprocess.run([os.path.join(HERE, 'start-sim'), work, path], check=True, capture_output=True,
                             text=True).stdout.strip()
    os.environ['DBUS_SYSTEM_BUS_ADDRESS'] = address
    try:
        bus = dbus.SystemBus()
        events = []
        bus.add_signal_receiver(lambda *a, **kw: events.append((time.time(), kw['member'], str(kw['path']), a)),
                                bus_name=B, member_keyword='member', path_keyword='path')
        ad = dbus.Interface(bus.get_object(B, HCI), 'org.bluez.Adapter1')
        ad.StartDiscovery()
        spin(lambda: any(e[1] == 'InterfacesAdded' and str(e[3][0]) == DEV_PATH for e in events), 5)
        ad.StopDiscovery()
        dev = dbus.Interface(bus.get_object(B, DEV_PATH), DEV)
        mark = len(events)
        t0 = time.time()
        dev.Connect()
        took = time.time() - t0
        spin(lambda: any(e[1] == 'PropertiesChanged' and e[2] == DEV_PATH and 'ServicesResolved' in e[3][1]
                         for e in events[mark:]), 3)
        ev = events[mark:]
        connected = [i for i, e in enumerate(ev) if e[1] == 'PropertiesChanged' and e[2] == DEV_PATH
                     and e[3][1].get('Connected')]
        resolved = [i for i, e in enumerate(ev) if e[1] == 'PropertiesChanged' and e[2] == DEV_PATH
                    and e[3][1].get('ServicesResolved')]
        gatt = [i for i, e in enumerate(ev) if e[1] == 'InterfacesAdded' and str(e[3][0]).startswith(DEV_PATH + '/')]
        check('signal_connected: Connected: true signalled', len(connected) == 1)
        check('connect_delay 100ms', 0.08 <= took <= 0.5, '%.3fs' % took)
        check('gatt_objects_first: every object before ServicesResolved', len(gatt) == 23 and bool(resolved)
              and max(gatt) < resolved[0], '%d objects' % len(gatt))
        check('resolve_delay 200ms', bool(resolved) and 0.15 <= ev[resolved[0]][0] - t0 - took <= 0.6)
        # pairing_failure_delay: an encrypted read drops the link 50 ms later
        t1 = time.time()
        try:
            dbus.Interface(bus.get_object(B, DEV_PATH + '/service0021/char0027'), CHRC).ReadValue({})
            err = None
        except dbus.exceptions.DBusException as e:
            err = e.get_dbus_message()
        check('pairing_failure_delay 50ms', err == 'Operation failed with ATT error: 0x0e' and time.time() - t1 < 0.3,
              '%s %.3fs' % (err, time.time() - t1))
        dev.Connect()
        t2 = time.time()
        dev.Disconnect()
        check('disconnect_delay 100ms', 0.08 <= time.time() - t2 <= 0.5, '%.3fs' % (time.time() - t2))
    finally:
        subprocess.run([os.path.join(HERE, 'stop'), work], capture_output=True)
        subprocess.run(['rm', '-rf', work])
    print('SELFTEST-SETTINGS %s (%d failed)' % ('PASS' if not failures else 'FAIL', len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
