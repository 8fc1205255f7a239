#!/usr/bin/python3
"""Checks that a running bluez-sim with scripts/sim/realbluez.yaml shows what the real BlueZ 5.66
showed in the realbluez VM (Tests/realbluez/README.md, "Where bluez-sim differs from the real
stack", items 1-10), through plain BlueZ D-Bus calls on the central adapter hci1:

  connect without a Connected: true signal; ServicesResolved (with UUIDs, Name/Alias = the GAP
  name, Modalias) before the GATT objects, which follow one InterfacesAdded per object in handle
  order; the handle layout (1801 with four characteristics, services from service0012);
  Battery1; client Flags without security; RSSI 127 signalled while discovering, also while
  connected and in the disconnect signal; Name/Alias back to the advertised name; reconnect from
  the cache (ServicesResolved only); an encrypted read without a bond drops the link;
  Discovering false twice; ConnectDevice absent without --experimental; timings.

    rm -rf /tmp/simr; export DBUS_SYSTEM_BUS_ADDRESS=$(scripts/sim/start-sim /tmp/simr scripts/sim/realbluez.yaml)
    scripts/sim/selftest-realbluez.py [--experimental] [--sim-dir /tmp/simr]     # ~25 s

--experimental: the sim runs with --experimental (ConnectDevice must exist). --sim-dir: at the end
the sim is stopped with SIGTERM and the order of its last signals is checked (Powered false, then
InterfacesRemoved). Prints one line per check and exits non-zero when any fails.
"""
import argparse
import os
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import *  # noqa: E402,F401,F403


ADAPTER, DEV, CHRC, SVC, BATT = ('org.bluez.Adapter1', 'org.bluez.Device1', 'org.bluez.GattCharacteristic1',
                                 'org.bluez.GattService1', 'org.bluez.Battery1')
HCI = '/org/bluez/hci1'
ADDR = '00:AA:01:00:00:00'
DEV_PATH = HCI + '/dev_00_AA_01_00_00_00'
TEST = '12345678-1234-5678-1234-56789abcdef%s'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--experimental', action='store_true')
    ap.add_argument('--sim-dir')
    args = ap.parse_args()

    bus = dbus.SystemBus()
    om = dbus.Interface(bus.get_object(B, '/'), OM)
    ad = dbus.Interface(bus.get_object(B, HCI), ADAPTER)
    adp = dbus.Interface(bus.get_object(B, HCI), PROPS)
    events = []   # (time, member, path, args), in arrival order (signals and async replies)

    def on_signal(*a, **kw):
        events.append((time.time(), kw['member'], str(kw['path']), a))

    bus.add_signal_receiver(on_signal, bus_name=B, member_keyword='member', path_keyword='path')

    def dev_changes(since, key=None):
        return [e for e in events[since:] if e[1] == 'PropertiesChanged' and e[2] == DEV_PATH and e[3][0] == DEV
                and (key is None or key in e[3][1])]

    def added(since, prefix=DEV_PATH + '/'):
        return [e for e in events[since:] if e[1] == 'InterfacesAdded' and str(e[3][0]).startswith(prefix)]

    # --- 11. ConnectDevice exists only with --experimental
    xml = dbus.Interface(bus.get_object(B, HCI), 'org.freedesktop.DBus.Introspectable').Introspect()
    if args.experimental:
        check('ConnectDevice introspected (--experimental)', 'ConnectDevice' in xml)
    else:
        err = error_of(lambda: ad.ConnectDevice(dbus.Dictionary({'Address': ADDR, 'AddressType': 'public'}, signature='sv')))
        check('ConnectDevice absent from introspection', 'ConnectDevice' not in xml)
        check('ConnectDevice: UnknownMethod', err is not None and err[0] == 'org.freedesktop.DBus.Error.UnknownMethod', str(err))
        check('ConnectDevice: libdbus\'s message',
              err is not None and err[1].rstrip('\n') == 'Method "ConnectDevice" with signature "a{sv}" on interface "org.bluez.Adapter1" doesn\'t exist', str(err))

    # --- discovery: RSSI 127 in InterfacesAdded and again every rssi_interval (2 s)
    ad.SetDiscoveryFilter({'UUIDs': dbus.Array(['180d'], signature='s'), 'Transport': 'le'})
    ad.StartDiscovery()
    spin(lambda: any(e[1] == 'InterfacesAdded' and str(e[3][0]) == DEV_PATH for e in events), 5)
    found = [e for e in events if e[1] == 'InterfacesAdded' and str(e[3][0]) == DEV_PATH]
    check('device found with RSSI 127', bool(found) and int(found[0][3][1][DEV].get('RSSI', 0)) == 127
          and str(found[0][3][1][DEV].get('Name')) == 'TestAdvertisement')
    mark = len(events)
    spin(lambda: len(dev_changes(mark, 'RSSI')) >= 1, 3)
    check('RSSI 127 signalled again while discovering', [int(e[3][1]['RSSI']) for e in dev_changes(mark, 'RSSI')][:1] == [127])

    # --- 1./10. Connect: ~0.55 s, no Connected: true signal
    dev = dbus.Interface(bus.get_object(B, DEV_PATH), DEV)
    devp = dbus.Interface(bus.get_object(B, DEV_PATH), PROPS)
    mark = len(events)
    t0 = time.time()
    dev.Connect()
    took = time.time() - t0
    check('Connect takes ~0.55 s', 0.45 <= took <= 1.0, '%.3fs' % took)
    check('Connected is true (Get)', bool(devp.Get(DEV, 'Connected')))
    spin(lambda: bool(dev_changes(mark, 'ServicesResolved')), 4)
    t_resolved = dev_changes(mark, 'ServicesResolved')[0][0] if dev_changes(mark, 'ServicesResolved') else 0
    check('no Connected: true signal', not any(e[3][1].get('Connected') for e in dev_changes(mark, 'Connected')),
          str([dict(e[3][1]) for e in dev_changes(mark)])[:200])
    check('ServicesResolved ~1.2 s after Connect returned', 1.0 <= t_resolved - (t0 + took) <= 1.8,
          '%.3fs' % (t_resolved - t0 - took))

    # --- 7./6. the ServicesResolved signal carries UUIDs, the GAP name and Modalias
    sr = dev_changes(mark, 'ServicesResolved')
    ch = dict(sr[0][3][1]) if sr else {}
    want = sorted([u16('1800'), u16('1801'), u16('180a'), u16('180d'), u16('180f'), TEST % '0'])
    check('UUIDs in the ServicesResolved signal', sorted(map(str, ch.get('UUIDs', []))) == want, str(ch.get('UUIDs')))
    check('Name/Alias = GAP name in the ServicesResolved signal',
          str(ch.get('Name')) == 'BlueZ 5.66' and str(ch.get('Alias')) == 'BlueZ 5.66')
    check('Modalias from 2A50', str(ch.get('Modalias')) == 'usb:v1D6Bp0246d0542', str(ch.get('Modalias')))

    # --- 9. GATT objects after ServicesResolved, one InterfacesAdded each, in handle order
    spin(lambda: any(e[2].endswith('') and str(e[3][0]).endswith('/char0029') for e in added(mark)), 3)
    gatt = added(mark)
    paths = [str(e[3][0]) for e in gatt]
    check('GATT objects follow ServicesResolved', bool(gatt) and bool(sr) and gatt[0][0] >= sr[0][0]
          and events.index(gatt[0]) > events.index(sr[0]), '%d objects' % len(gatt))
    check('one InterfacesAdded per object, handle order', len(paths) == 23 and paths == sorted(paths)
          and len(set(paths)) == len(paths), str(len(paths)))
    check('objects spread over gatt_export_time', bool(gatt) and gatt[-1][0] - gatt[0][0] >= 0.15,
          '%.3fs' % (gatt[-1][0] - gatt[0][0] if gatt else 0))

    # --- 5. Battery1 right after ServicesResolved
    batt = [e for e in events[mark:] if e[1] == 'InterfacesAdded' and str(e[3][0]) == DEV_PATH and BATT in e[3][1]]
    check('Battery1 added after ServicesResolved', bool(batt) and bool(sr) and events.index(batt[0]) > events.index(sr[0])
          and isinstance(batt[0][3][1][BATT]['Percentage'], dbus.Byte), str(batt[0][3][1][BATT] if batt else None))

    # --- 4. handle layout and 2. client Flags
    objs = om.GetManagedObjects()
    by_path = {str(p)[len(DEV_PATH) + 1:]: (v.get(SVC) or v.get(CHRC) or {}) for p, v in objs.items()
               if str(p).startswith(DEV_PATH + '/')}
    layout = {k: str(v.get('UUID', '')) for k, v in by_path.items()}
    expect = {'service0008': u16('1801'), 'service0008/char0009': u16('2a05'), 'service0008/char000c': u16('2b29'),
              'service0008/char000e': u16('2b2a'), 'service0008/char0010': u16('2b3a'), 'service0012': u16('180a'),
              'service0015': u16('180d'), 'service0015/char0016': u16('2a37'), 'service0015/char0019': u16('2a38'),
              'service0015/char001b': u16('2a39'), 'service001d': u16('180f'), 'service001d/char001e': u16('2a19'),
              'service0021': TEST % '0'}
    check('handle layout as on BlueZ 5.66', all(layout.get(k) == v for k, v in expect.items()),
          str({k: layout.get(k, '-')[4:8] for k, v in expect.items() if layout.get(k) != v}))
    check('no GattService1 for 1800', u16('1800') not in layout.values())
    flags = {str(v['UUID']): [str(f) for f in v['Flags']] for v in by_path.values() if 'Flags' in v}
    check('encrypt/secure characteristics show read, write', flags.get(TEST % '3') == ['read', 'write']
          and flags.get(TEST % '5') == ['read', 'write'], str((flags.get(TEST % '3'), flags.get(TEST % '5'))))
    dh = dbus.Interface(bus.get_object(B, DEV_PATH + '/service0008/char000e'), CHRC).ReadValue({})
    check('Database Hash is 16 bytes', len(dh) == 16)

    # --- 8./6. while connected and discovering: RSSI keeps coming, Name/Alias go back to the advertised name
    mark2 = len(events)
    spin(lambda: len(dev_changes(mark2, 'RSSI')) >= 1 and len(dev_changes(mark, 'Name')) >= 2, 3)
    check('RSSI signalled while connected', len(dev_changes(mark2, 'RSSI')) >= 1)
    names = [str(e[3][1]['Name']) for e in dev_changes(mark, 'Name')][1:]
    check('Name/Alias back to the advertised name', names[:1] == ['TestAdvertisement']
          and str(devp.Get(DEV, 'Alias')) == 'TestAdvertisement', str(names))

    # --- 5. Percentage follows 2A19
    bpath = DEV_PATH + '/service001d/char001e'
    bchr = dbus.Interface(bus.get_object(B, bpath), CHRC)
    level = bytes(bchr.ReadValue({}))[0]
    check('Percentage = 2A19 value', int(devp.Get(BATT, 'Percentage')) == level, str(level))
    mark3 = len(events)
    bchr.StartNotify()
    spin(lambda: any(e[1] == 'PropertiesChanged' and e[2] == DEV_PATH and e[3][0] == BATT for e in events[mark3:]), 7)
    pc = [int(e[3][1]['Percentage']) for e in events[mark3:] if e[1] == 'PropertiesChanged' and e[2] == DEV_PATH
          and e[3][0] == BATT]
    notified = [bytes(e[3][1]['Value'])[0] for e in events[mark3:] if e[2] == bpath and e[1] == 'PropertiesChanged'
                and 'Value' in e[3][1]]
    check('Percentage signalled when 2A19 changes', bool(pc) and bool(notified) and pc[-1] == notified[-1] != level,
          'percentage %s, notified %s' % (pc, notified))
    bchr.StopNotify()

    # --- 3. an encrypted read without a bond drops the link; the read in flight fails "Not connected"
    replies = []
    mark = len(events)

    def reply(tag):
        return (lambda *a: events.append((time.time(), 'reply', tag, a)),
                lambda e: events.append((time.time(), 'error', tag, (e.get_dbus_name(), e.get_dbus_message()))))

    ok3, err3 = reply('def3')
    t_read = time.time()
    dbus.Interface(bus.get_object(B, DEV_PATH + '/service0021/char0027'), CHRC).ReadValue(
        {}, reply_handler=ok3, error_handler=err3)
    spin(lambda: False, 0.05)
    ok2, err2 = reply('2a38')
    dbus.Interface(bus.get_object(B, DEV_PATH + '/service0015/char0019'), CHRC).ReadValue(
        {}, reply_handler=ok2, error_handler=err2)
    spin(lambda: sum(1 for e in events[mark:] if e[1] in ('reply', 'error')) >= 2, 3)
    order = [e for e in events[mark:] if e[1] in ('reply', 'error') or (e[1] == 'PropertiesChanged' and e[2] == DEV_PATH
             and 'Connected' in e[3][1])]
    kinds = [(e[1], e[2]) if e[1] != 'PropertiesChanged' else ('down', '') for e in order]
    r3 = [e[3] for e in order if e[2] == 'def3']
    r2 = [e[3] for e in order if e[2] == '2a38']
    down = [e for e in order if e[1] == 'PropertiesChanged']
    check('encrypted read: ATT error 0x0e', r3 == [('org.bluez.Error.Failed', 'Operation failed with ATT error: 0x0e')],
          str(r3))
    check('read in flight: Not connected', r2 == [('org.bluez.Error.Failed', 'Not connected')], str(r2))
    check('link down signalled before the error replies', kinds[:1] == [('down', '')], str(kinds))
    check('link-down signal: ServicesResolved, Connected false, RSSI 127', bool(down)
          and dict(down[0][3][1]) == {'ServicesResolved': False, 'Connected': False, 'RSSI': 127},
          str(dict(down[0][3][1])) if down else '')
    if down:
        check('link drops ~0.3 s after the read', 0.25 <= down[0][0] - t_read <= 0.8, '%.3fs' % (down[0][0] - t_read))
    spin(lambda: False, 0.1)
    check('Battery1 removed at the disconnect', any(e[1] == 'InterfacesRemoved' and str(e[3][0]) == DEV_PATH
                                                     and BATT in e[3][1] for e in events[mark:]))

    # --- 9./10. reconnect: the objects are cached, only ServicesResolved comes (~0.45 s after Connect)
    mark = len(events)
    t0 = time.time()
    dev.Connect()
    took = time.time() - t0
    spin(lambda: bool(dev_changes(mark, 'ServicesResolved')), 3)
    sr = dev_changes(mark, 'ServicesResolved')
    check('reconnect: ServicesResolved ~0.45 s after Connect', bool(sr) and 0.3 <= sr[0][0] - t0 - took <= 0.9,
          '%.3fs' % (sr[0][0] - t0 - took if sr else -1))
    spin(lambda: False, 0.4)
    check('reconnect: no InterfacesAdded for GATT objects', not added(mark))
    check('reconnect: Battery1 again', any(e[1] == 'InterfacesAdded' and str(e[3][0]) == DEV_PATH for e in events[mark:]))

    # --- 10. Disconnect takes ~2 s; the signal carries RSSI while discovering
    mark = len(events)
    t0 = time.time()
    dev.Disconnect()
    took = time.time() - t0
    check('Disconnect takes ~2 s', 1.8 <= took <= 3.0, '%.3fs' % took)
    spin(lambda: bool(dev_changes(mark, 'Connected')), 1)
    down = dev_changes(mark, 'Connected')
    check('disconnect signal carries RSSI', bool(down) and 'RSSI' in down[0][3][1], str(dict(down[0][3][1])) if down else '')

    # --- 8. StopDiscovery: Discovering false twice, RSSI invalidated
    mark = len(events)
    ad.StopDiscovery()
    spin(lambda: False, 0.3)
    disc = [e for e in events[mark:] if e[1] == 'PropertiesChanged' and e[2] == HCI and 'Discovering' in e[3][1]]
    check('Discovering false twice', [bool(e[3][1]['Discovering']) for e in disc] == [False, False], str(len(disc)))
    inval = [e for e in events[mark:] if e[1] == 'PropertiesChanged' and e[2] == DEV_PATH and 'RSSI' in e[3][2]]
    check('RSSI invalidated', bool(inval) and len(inval[0][3][1]) == 0)

    # --- 12. SIGTERM: Powered false, then InterfacesRemoved
    if args.sim_dir:
        mark = len(events)
        os.kill(int(open(os.path.join(args.sim_dir, 'bluez-sim.pid')).read()), signal.SIGTERM)
        spin(lambda: any(e[1] == 'InterfacesRemoved' and str(e[3][0]) == HCI for e in events[mark:]), 5)
        seq = [(e[1], e[2] if e[1] == 'PropertiesChanged' else str(e[3][0])) for e in events[mark:]
               if (e[1] == 'PropertiesChanged' and 'Powered' in e[3][1]) or e[1] == 'InterfacesRemoved']
        powered = [i for i, s in enumerate(seq) if s[0] == 'PropertiesChanged']
        removed = [i for i, s in enumerate(seq) if s[0] == 'InterfacesRemoved']
        check('SIGTERM: Powered false on every adapter, then InterfacesRemoved', len(powered) == 2 and bool(removed)
              and max(powered) < min(removed) and ('InterfacesRemoved', HCI) in seq, str(seq[:6]))

    print('SELFTEST-REALBLUEZ %s (%d failed)' % ('PASS' if not failures else 'FAIL', len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
