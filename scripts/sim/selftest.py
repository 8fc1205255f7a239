#!/usr/bin/python3
"""Checks a running bluez-sim with the demo scenario through plain BlueZ D-Bus calls
(python3-dbus), the way a BlueZ client sees it: objects, properties, errors, discovery with a
filter, connect / resolve, read, write (request, command, echo), notifications, disconnect,
RemoveDevice, power.

    DBUS_SYSTEM_BUS_ADDRESS=... scripts/sim/selftest.py [--write-log FILE] [--notify-log FILE]

Prints one line per check and exits non-zero when any fails.
"""
import argparse
import os
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import *  # noqa: E402,F401,F403


ADAPTER, DEV, CHRC, DESC, SVC = ('org.bluez.Adapter1', 'org.bluez.Device1', 'org.bluez.GattCharacteristic1',
                                 'org.bluez.GattDescriptor1', 'org.bluez.GattService1')
HR_ADDR, ENV_ADDR, ECHO_ADDR, OTHER_ADDR = ('C8:12:34:56:78:9A', 'E4:5F:01:AB:CD:EF', 'D0:5A:00:00:EC:01',
                                            '5C:F3:70:11:22:33')
ECHO_W, ECHO_C, ECHO_N = ('5e1f0002-b5a3-4c1d-9e0a-ec40ec40ec40', '5e1f0003-b5a3-4c1d-9e0a-ec40ec40ec40',
                          '5e1f0004-b5a3-4c1d-9e0a-ec40ec40ec40')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--write-log')
    ap.add_argument('--notify-log')
    ap.add_argument('--adapter', default='/org/bluez/hci0')
    args = ap.parse_args()

    bus = dbus.SystemBus()
    om = dbus.Interface(bus.get_object(B, '/'), OM)
    hci = args.adapter
    ad = dbus.Interface(bus.get_object(B, hci), ADAPTER)
    adp = dbus.Interface(bus.get_object(B, hci), PROPS)
    events = []

    def on_signal(*a, **kw):
        events.append((kw['member'], str(kw['path']), a))

    bus.add_signal_receiver(on_signal, bus_name=B, member_keyword='member', path_keyword='path')

    objs = om.GetManagedObjects()
    check('root objects', '/org/bluez' in objs and 'org.bluez.AgentManager1' in objs['/org/bluez'])
    a = objs[hci][ADAPTER]
    check('adapter properties', bool(a['Powered']) and not a['Discovering'] and str(a['AddressType']) == 'public'
          and isinstance(a['Class'], dbus.UInt32) and isinstance(a['DiscoverableTimeout'], dbus.UInt32))
    check('no devices before discovery', not any(p.startswith(hci + '/dev_') for p in map(str, objs)))

    # --- errors of discovery
    check('StopDiscovery without start', error_of(ad.StopDiscovery) == ('org.bluez.Error.Failed', 'No discovery started'))
    check('bad filter key', error_of(lambda: ad.SetDiscoveryFilter({'Foo': 'x'}))[0] == 'org.bluez.Error.InvalidArguments')
    check('GetDiscoveryFilters', list(ad.GetDiscoveryFilters()) ==
          ['UUIDs', 'RSSI', 'Pathloss', 'Transport', 'DuplicateData', 'Discoverable', 'Pattern'])

    # --- discovery with a 180D filter: only the heart rate monitor appears
    ad.SetDiscoveryFilter({'UUIDs': dbus.Array(['180d'], signature='s'), 'Transport': 'le'})
    t0 = time.time()
    ad.StartDiscovery()
    check('StartDiscovery twice', error_of(ad.StartDiscovery) == ('org.bluez.Error.InProgress', 'Operation already in progress'))
    hr_path = hci + '/dev_C8_12_34_56_78_9A'
    spin(lambda: any(e[0] == 'InterfacesAdded' and str(e[2][0]) == hr_path for e in events), 5)
    found = time.time() - t0
    check('heart rate monitor found', any(e[0] == 'InterfacesAdded' and str(e[2][0]) == hr_path for e in events),
          '%.2fs' % found)
    check('Discovering true', bool(adp.Get(ADAPTER, 'Discovering')))
    spin(lambda: False, 1.3)
    paths = [str(p) for p in om.GetManagedObjects()]
    check('filter excludes others', hr_path in paths and not any(ENV_ADDR.replace(':', '_') in p for p in paths))
    rssi_updates = [e for e in events if e[0] == 'PropertiesChanged' and e[1] == hr_path and 'RSSI' in e[2][1]]
    check('RSSI updates while discovering', len(rssi_updates) >= 1, '%d updates' % len(rssi_updates))
    d = om.GetManagedObjects()[hr_path][DEV]
    check('device properties', str(d['Name']) == 'Polar H10 Sim' and str(d['AddressType']) == 'public'
          and [str(x) for x in d['UUIDs']] == [u16('180d')] and isinstance(d['RSSI'], dbus.Int16)
          and int(d['RSSI']) < 0 and str(d['Adapter']) == hci and not d['Connected']
          and bytes(d['ManufacturerData'][dbus.UInt16(0x006b)]) == bytes.fromhex('3f000000'), str(dict(d))[:100])
    ad.StopDiscovery()
    spin(lambda: not adp.Get(ADAPTER, 'Discovering'), 2)
    check('Discovering false', not adp.Get(ADAPTER, 'Discovering'))
    spin(lambda: False, 0.2)
    d = om.GetManagedObjects()[hr_path][DEV]
    check('RSSI invalidated after stop', 'RSSI' not in d)

    # --- unfiltered discovery finds everyone
    ad.StartDiscovery()
    spin(lambda: sum(1 for p in om.GetManagedObjects() if str(p).count('/') == 4 and '/dev_' in str(p)) >= 4, 5)
    n = sum(1 for p in om.GetManagedObjects() if '/dev_' in str(p) and str(p).count('/') == 4)
    check('unfiltered discovery finds 4 devices', n == 4, str(n))
    ad.StopDiscovery()

    # --- connect
    dev = dbus.Interface(bus.get_object(B, hr_path), DEV)
    devp = dbus.Interface(bus.get_object(B, hr_path), PROPS)
    t0 = time.time()
    dev.Connect()
    check('Connect returns when connected', bool(devp.Get(DEV, 'Connected')), '%.3fs' % (time.time() - t0))
    check('Connect again succeeds', error_of(dev.Connect) is None)
    spin(lambda: bool(devp.Get(DEV, 'ServicesResolved')), 5)
    check('ServicesResolved', bool(devp.Get(DEV, 'ServicesResolved')), '%.3fs' % (time.time() - t0))
    objs = om.GetManagedObjects()
    chrcs = {str(v[CHRC]['UUID']): str(p) for p, v in objs.items() if str(p).startswith(hr_path) and CHRC in v}
    svcs = {str(v[SVC]['UUID']): str(p) for p, v in objs.items() if str(p).startswith(hr_path) and SVC in v}
    check('GATT services', set(svcs) == {u16('1801'), u16('180d'), u16('180f'), u16('180a')}, str(sorted(svcs.values())))
    # BlueZ 5.66's Generic Attribute service has four characteristics: scenario services start at 0x0012.
    check('GATT paths like BlueZ', chrcs.get(u16('2a37'), '').endswith('/service0012/char0013'), chrcs.get(u16('2a37')))
    check('1801 characteristics', sorted(u for u, p in chrcs.items() if '/service0008/' in p) ==
          sorted([u16('2a05'), u16('2b29'), u16('2b2a'), u16('2b3a')]))
    uuids = [str(x) for x in devp.Get(DEV, 'UUIDs')]
    check('UUIDs after resolve', uuids == sorted([u16('1800'), u16('1801'), u16('180d'), u16('180f'), u16('180a')]), str(uuids))
    hr = objs[chrcs[u16('2a37')]][CHRC]
    check('2A37 properties', list(map(str, hr['Flags'])) == ['notify'] and not hr['Notifying']
          and 'NotifyAcquired' in hr and int(hr['MTU']) == 247)
    check('2A38 has no Notifying', 'Notifying' not in objs[chrcs[u16('2a38')]][CHRC])
    ccc = [str(p) for p, v in objs.items() if str(p).startswith(chrcs[u16('2a37')] + '/') and DESC in v]
    check('CCC descriptor', len(ccc) == 1 and objs[ccc[0]][DESC]['UUID'] == u16('2902'), str(ccc))

    def C(path):
        return dbus.Interface(bus.get_object(B, path), CHRC)

    v = C(chrcs[u16('2a38')]).ReadValue({})
    check('read 2A38 = 01', bytes(v) == b'\x01')
    check('read offset too big', error_of(lambda: C(chrcs[u16('2a38')]).ReadValue({'offset': dbus.UInt16(5)})) ==
          ('org.bluez.Error.InvalidArguments', 'Invalid offset'))
    check('read not permitted', error_of(lambda: C(chrcs[u16('2a37')]).ReadValue({})) ==
          ('org.bluez.Error.NotPermitted', 'Read not permitted'))
    check('write not permitted', error_of(lambda: C(chrcs[u16('2a38')]).WriteValue([1], {'type': 'request'})) ==
          ('org.bluez.Error.NotPermitted', 'Write not permitted'))
    check('write without type not supported', error_of(lambda: C(chrcs[u16('2a38')]).WriteValue([1], {})) ==
          ('org.bluez.Error.NotSupported', 'Operation is not supported'))
    check('StartNotify on read-only', error_of(lambda: C(chrcs[u16('2a38')]).StartNotify()) ==
          ('org.bluez.Error.NotSupported', 'Operation is not supported'))
    check('StopNotify without session', error_of(lambda: C(chrcs[u16('2a37')]).StopNotify()) ==
          ('org.bluez.Error.Failed', 'No notify session started'))

    # --- notifications
    hrp = chrcs[u16('2a37')]
    C(hrp).StartNotify()
    check('StartNotify twice succeeds', error_of(lambda: C(hrp).StartNotify()) is None)
    spin(lambda: sum(1 for e in events if e[0] == 'PropertiesChanged' and e[1] == hrp and 'Value' in e[2][1]) >= 2, 4)
    values = [bytes(e[2][1]['Value']) for e in events if e[0] == 'PropertiesChanged' and e[1] == hrp and 'Value' in e[2][1]]
    check('heart rate notifications', len(values) >= 2 and all(60 <= x[1] <= 90 for x in values),
          ' '.join(x.hex() for x in values))
    check('Notifying true', any(e[0] == 'PropertiesChanged' and e[1] == hrp and e[2][1].get('Notifying') for e in events))
    C(hrp).StopNotify()
    check('Notifying false after StopNotify', not dbus.Interface(bus.get_object(B, hrp), PROPS).Get(CHRC, 'Notifying'))

    # --- echo device: ConnectDevice is refused for an existing object; connect it and echo writes
    echo_path = hci + '/dev_D0_5A_00_00_EC_01'
    experimental = 'ConnectDevice' in dbus.Interface(bus.get_object(B, hci), 'org.freedesktop.DBus.Introspectable').Introspect()
    connect_device_error = error_of(lambda: ad.ConnectDevice({'Address': ECHO_ADDR, 'AddressType': 'public'}))
    if experimental:
        check('ConnectDevice on existing device', connect_device_error == ('org.bluez.Error.AlreadyExists', 'Already Exists'))
    else:
        # bluetoothd without -E (Debian's default): the experimental method does not exist.
        check('ConnectDevice without --experimental', connect_device_error is not None
              and connect_device_error[0] == 'org.freedesktop.DBus.Error.UnknownMethod', str(connect_device_error))
    edev = dbus.Interface(bus.get_object(B, echo_path), DEV)
    edevp = dbus.Interface(bus.get_object(B, echo_path), PROPS)
    edev.Connect()
    spin(lambda: bool(edevp.Get(DEV, 'ServicesResolved')), 15)

    def echo_chars():
        objs = om.GetManagedObjects()
        return {str(v[CHRC]['UUID']): str(p) for p, v in objs.items() if str(p).startswith(echo_path) and CHRC in v}
    # Objects trail ServicesResolved at a first resolve (like BlueZ 5.66): wait for the last one.
    spin(lambda: all(u in echo_chars() for u in (ECHO_N, ECHO_W, ECHO_C)), 15)
    ech = echo_chars()
    check('echo characteristics exported', all(u in ech for u in (ECHO_N, ECHO_W, ECHO_C)), str(sorted(ech)))
    C(ech[ECHO_N]).StartNotify()
    spin(lambda: any(e[0] == 'PropertiesChanged' and e[1] == ech[ECHO_N] and e[2][1].get('Notifying') for e in events), 2)
    mark = len(events)
    C(ech[ECHO_W]).WriteValue(dbus.Array([1, 2], signature='y'), {'type': 'request'})
    C(ech[ECHO_C]).WriteValue(dbus.Array([3, 4, 5], signature='y'), {'type': 'command'})
    spin(lambda: sum(1 for e in events[mark:] if e[1] == ech[ECHO_N] and 'Value' in e[2][1]) >= 2, 2)
    echoed = [bytes(e[2][1]['Value']).hex() for e in events[mark:] if e[1] == ech[ECHO_N] and 'Value' in e[2][1]]
    check('echo notifications', echoed == ['0102', '030405'], str(echoed))
    check('read back written value', bytes(C(ech[ECHO_W]).ReadValue({})) == b'\x01\x02')
    # BlueZ 5.66 sends type=command whatever the Flags say; this peripheral may write it, so it applies it.
    mark = len(events)
    check('command on write-only is sent (5.66)', error_of(lambda: C(ech[ECHO_W]).WriteValue([9], {'type': 'command'})) is None)
    spin(lambda: any(e[1] == ech[ECHO_N] and 'Value' in e[2][1] for e in events[mark:]), 2)
    check('command on write-only applied', bytes(C(ech[ECHO_W]).ReadValue({})) == b'\x09')
    check('unknown write type not supported', error_of(lambda: C(ech[ECHO_W]).WriteValue([9], {'type': 'bogus'})) ==
          ('org.bluez.Error.NotSupported', 'Operation is not supported'))
    if args.write_log:
        lines = open(args.write_log).read().splitlines()
        check('write log', any(l.split()[1:] == [ECHO_ADDR, ECHO_W, 'request', '0', '0102'] for l in lines)
              and any(l.split()[1:] == [ECHO_ADDR, ECHO_C, 'command', '0', '030405'] for l in lines)
              and any(l.split()[1:] == [ECHO_ADDR, ECHO_W, 'command', '0', '09'] for l in lines), str(lines[-3:]))

    # --- disconnect: link state drops in one signal, GATT objects stay (cache), sessions resume
    mark = len(events)
    t0 = time.time()
    edev.Disconnect()
    check('Disconnect', not edevp.Get(DEV, 'Connected'), '%.3fs' % (time.time() - t0))
    spin(lambda: False, 0.1)
    changes = [e[2][1] for e in events[mark:] if e[0] == 'PropertiesChanged' and e[1] == echo_path]
    check('one PropertiesChanged for disconnect', any(set(c) == {'Connected', 'ServicesResolved'} for c in changes), str(changes))
    check('GATT objects kept after disconnect', ech[ECHO_N] in [str(p) for p in om.GetManagedObjects()])
    check('read while disconnected', error_of(lambda: C(ech[ECHO_W]).ReadValue({})) == ('org.bluez.Error.Failed', 'Not connected'))
    edev.Connect()
    spin(lambda: bool(edevp.Get(DEV, 'ServicesResolved')), 5)
    mark = len(events)
    C(ech[ECHO_W]).WriteValue(dbus.Array([7], signature='y'), {})
    spin(lambda: any(e[1] == ech[ECHO_N] and 'Value' in e[2][1] for e in events[mark:]), 2)
    check('notify session resumed after reconnect', any(e[1] == ech[ECHO_N] and 'Value' in e[2][1] for e in events[mark:]))

    # --- RemoveDevice, power off
    check('RemoveDevice unknown', error_of(lambda: ad.RemoveDevice(dbus.ObjectPath(hci + '/dev_00_00_00_00_00_01'))) ==
          ('org.bluez.Error.DoesNotExist', 'Does Not Exist'))
    ad.RemoveDevice(dbus.ObjectPath(echo_path))
    spin(lambda: False, 0.1)
    check('RemoveDevice removes subtree', not any(str(p).startswith(echo_path) for p in om.GetManagedObjects()))
    adp.Set(ADAPTER, 'Powered', dbus.Boolean(False))
    spin(lambda: False, 0.1)
    check('power off disconnects', not devp.Get(DEV, 'Connected'))
    check('StartDiscovery powered off', error_of(ad.StartDiscovery) == ('org.bluez.Error.NotReady', 'Resource Not Ready'))
    check('Connect powered off', error_of(dev.Connect) == ('org.bluez.Error.NotReady', 'Resource Not Ready'))
    adp.Set(ADAPTER, 'Powered', dbus.Boolean(True))
    spin(lambda: False, 0.1)
    if experimental:
        check('ConnectDevice by address', str(ad.ConnectDevice({'Address': ECHO_ADDR, 'AddressType': 'public'})) == echo_path)
        spin(lambda: bool(edevp.Get(DEV, 'ServicesResolved')), 5)
        check('ConnectDevice resolves services', bool(edevp.Get(DEV, 'ServicesResolved')))
        edev.Disconnect()
    dev.Disconnect()

    print('SELFTEST %s (%d failed)' % ('PASS' if not failures else 'FAIL', len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
