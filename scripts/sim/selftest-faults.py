#!/usr/bin/python3
"""Checks the fault injection of a running bluez-sim (demo scenario): the scenario's per-characteristic
errors and delays, the Flags rules of BlueZ 5.66, and every method of the control interface
org.bluezsim.Control1, each observed the way a BlueZ client sees it (plain org.bluez D-Bus calls and
signals, python3-dbus). With --sim-dir it also restarts the simulator process (scripts/sim/restart-sim)
and checks that known devices come back from the state directory.

    DBUS_SYSTEM_BUS_ADDRESS=... scripts/sim/selftest-faults.py [--write-log FILE] [--sim-dir DIR]

Start the simulator fresh for it (scripts/sim/start-sim DIR): it expects no device objects yet.
Prints one line per check and exits non-zero when any fails.
"""
import argparse
import os
import subprocess
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import *  # noqa: E402,F401,F403


ADAPTER, DEV, CHRC = 'org.bluez.Adapter1', 'org.bluez.Device1', 'org.bluez.GattCharacteristic1'
CTL_NAME, CTL_PATH, CTL_IFACE = 'org.bluezsim', '/org/bluezsim', 'org.bluezsim.Control1'
HR, ECHO, ENV = 'C8:12:34:56:78:9A', 'D0:5A:00:00:EC:01', 'E4:5F:01:AB:CD:EF'
ECHO_W, ECHO_N, ECHO_DENY, ECHO_SLOW = ['5e1f000%d-b5a3-4c1d-9e0a-ec40ec40ec40' % i for i in (2, 4, 5, 6)]
HERE = os.path.dirname(os.path.abspath(__file__))


class Call:
    """An asynchronous method call: done, result, error (name, message), seconds it took."""

    def __init__(self, method, *args, timeout=25):
        self.done, self.result, self.error, self.t0, self.seconds = False, None, None, time.time(), None
        method(*args, reply_handler=self._ok, error_handler=self._err, timeout=timeout)

    def _ok(self, *result):
        self.result, self.done, self.seconds = result, True, time.time() - self.t0

    def _err(self, e):
        self.error, self.done, self.seconds = (e.get_dbus_name(), e.get_dbus_message()), True, time.time() - self.t0

    def wait(self, timeout=10):
        spin(lambda: self.done, timeout)
        return self


def simctl(*argv):
    return subprocess.run([os.path.join(HERE, 'simctl')] + list(argv), capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--write-log')
    ap.add_argument('--sim-dir', help='the start-sim directory: also test a process restart')
    ap.add_argument('--adapter', default='/org/bluez/hci0')
    args = ap.parse_args()

    bus = dbus.SystemBus()
    hci = args.adapter
    om = dbus.Interface(bus.get_object(B, '/'), OM)
    ad = dbus.Interface(bus.get_object(B, hci), ADAPTER)
    adp = dbus.Interface(bus.get_object(B, hci), PROPS)
    ctl = dbus.Interface(bus.get_object(CTL_NAME, CTL_PATH, introspect=False), CTL_IFACE)
    events = []  # (time, member, path, args)

    def on_signal(*a, **kw):
        events.append((time.time(), kw['member'], str(kw['path']), a))

    bus.add_signal_receiver(on_signal, bus_name=B, member_keyword='member', path_keyword='path')
    owners = []
    bus.add_signal_receiver(lambda name, old, new: owners.append((time.time(), str(old), str(new))),
                            'NameOwnerChanged', 'org.freedesktop.DBus', 'org.freedesktop.DBus',
                            '/org/freedesktop/DBus', arg0=B)

    def dev_path(addr):
        return hci + '/dev_' + addr.replace(':', '_')

    def D(addr):
        return dbus.Interface(bus.get_object(B, dev_path(addr)), DEV)

    def dprop(addr, name):
        return dbus.Interface(bus.get_object(B, dev_path(addr)), PROPS).Get(DEV, name)

    def C(path):
        return dbus.Interface(bus.get_object(B, path), CHRC)

    def chrcs(addr):
        p = dev_path(addr)
        return {str(v[CHRC]['UUID']): str(k) for k, v in om.GetManagedObjects().items()
                if str(k).startswith(p + '/') and CHRC in v}

    def changes(path, since, key=None):
        return [(t, e[3][1]) for (t, m, pth, e) in [(x[0], x[1], x[2], x) for x in events[since:]]
                if m == 'PropertiesChanged' and pth == path and (key is None or key in e[3][1])]

    def connect_resolved(addr, timeout=5):
        D(addr).Connect()
        spin(lambda: bool(dprop(addr, 'ServicesResolved')), timeout)
        return bool(dprop(addr, 'ServicesResolved'))

    def stats(*keys):
        v = ctl.GetStats()
        for k in keys:
            v = v[k]
        return v

    # --- the control interface stays out of BlueZ's object tree
    objs = om.GetManagedObjects()
    check('control object not in org.bluez tree', not any(str(p).startswith('/org/bluezsim') for p in objs))
    check('control name org.bluezsim', bus.name_has_owner(CTL_NAME)
          and bus.get_name_owner(CTL_NAME) != bus.get_name_owner(B))
    check('control: unknown device error', error_of(lambda: ctl.DropConnection('00:00:00:00:00:01')) ==
          ('org.bluezsim.Error.UnknownDevice', 'No peripheral 00:00:00:00:00:01 in the scenario'))
    check('control: bad mode error', (error_of(lambda: ctl.SetResolveBehaviour(HR, 'sometimes')) or ('',))[0] ==
          'org.bluezsim.Error.InvalidArguments')

    # --- connect the heart rate monitor and the echo device (ConnectDevice: no scan needed)
    ad.ConnectDevice({'Address': HR, 'AddressType': 'public'})
    ad.ConnectDevice({'Address': ECHO, 'AddressType': 'public'})
    spin(lambda: bool(dprop(HR, 'ServicesResolved')) and bool(dprop(ECHO, 'ServicesResolved')), 5)
    hr, ech = chrcs(HR), chrcs(ECHO)
    check('devices connected', bool(dprop(HR, 'ServicesResolved')) and ECHO_SLOW in ech)

    # --- scenario errors: the heart rate control point mirrors BlueZ's example peripheral
    cp = hr[u16('2a39')]
    check('2A39 [01] accepted', error_of(lambda: C(cp).WriteValue([1], {'type': 'request'})) is None)
    check('2A39 [02] -> ATT 0x80', error_of(lambda: C(cp).WriteValue([2], {'type': 'request'})) ==
          ('org.bluez.Error.Failed', 'Operation failed with ATT error: 0x80'))
    check('2A39 [01 02] -> Invalid Length', error_of(lambda: C(cp).WriteValue([1, 2], {})) ==
          ('org.bluez.Error.InvalidArguments', 'Invalid Length'))
    check('always refused write', error_of(lambda: C(ech[ECHO_DENY]).WriteValue([7], {'type': 'request'})) ==
          ('org.bluez.Error.NotPermitted', 'Write not permitted'))
    check('refused write left the value', bytes(C(ech[ECHO_DENY]).ReadValue({})) == b'\x00')

    # --- Flags as BlueZ 5.66 enforces them
    bsl = hr[u16('2a38')]
    check('read without read flag', error_of(lambda: C(cp).ReadValue({})) ==
          ('org.bluez.Error.NotPermitted', 'Read not permitted'))
    check('request without write flag', error_of(lambda: C(bsl).WriteValue([5], {'type': 'request'})) ==
          ('org.bluez.Error.NotPermitted', 'Write not permitted'))
    check('no type, no write flag', error_of(lambda: C(bsl).WriteValue([5], {})) ==
          ('org.bluez.Error.NotSupported', 'Operation is not supported'))
    check('command without write flags: sent, success', error_of(lambda: C(bsl).WriteValue([5], {'type': 'command'})) is None)
    check('... and dropped by the peripheral', bytes(C(bsl).ReadValue({})) == b'\x01')
    if args.write_log:
        lines = open(args.write_log).read().splitlines()
        logged = [l.split()[1:] for l in lines]
        check('write log: only accepted writes', [HR, u16('2a39'), 'request', '0', '01'] in logged
              and not any(l[1] in (ECHO_DENY, u16('2a38')) or l[-1] in ('02', '0102') for l in logged), str(logged))

    # --- delays: a late reply is just late; a pending write makes others InProgress
    slow = C(ech[ECHO_SLOW])
    t0 = time.time()
    check('30 s write: the client times out', (error_of(lambda: slow.WriteValue([1], {'type': 'request'}, timeout=1.5))
                                                or ('',))[0] == 'org.freedesktop.DBus.Error.NoReply', '%.1fs' % (time.time() - t0))
    check('write while one is pending: InProgress', error_of(lambda: slow.WriteValue([2], {'type': 'request'})) ==
          ('org.bluez.Error.InProgress', 'In Progress'))
    check('pending write not applied yet', bytes(slow.ReadValue({})) == b'\x00')
    ctl.SetCharacteristicDelay(ECHO, ECHO_W, 'write', dbus.UInt32(1200))
    c = Call(C(ech[ECHO_W]).WriteValue, dbus.Array([0x11], signature='y'), {'type': 'request'}, timeout=5).wait(5)
    check('SetCharacteristicDelay write 1.2 s: late success', c.error is None and c.done and 1.1 <= c.seconds < 3,
          '%s %.2fs' % (c.error, c.seconds or -1))
    ctl.SetCharacteristicDelay(ECHO, ECHO_W, 'write', dbus.UInt32(0))
    ctl.SetCharacteristicDelay(ECHO, ECHO_W, 'read', dbus.UInt32(800))
    r1 = Call(C(ech[ECHO_W]).ReadValue, {})
    r2 = Call(C(ech[ECHO_W]).ReadValue, {})
    r3 = Call(C(ech[ECHO_W]).ReadValue, {'offset': dbus.UInt16(1)})
    for r in (r1, r2, r3):
        r.wait(5)
    check('delayed reads with one offset share the answer', r1.result is not None and r2.result is not None
          and bytes(r1.result[0]) == bytes(r2.result[0]) == b'\x11' and r1.seconds >= 0.7, '%.2fs' % (r1.seconds or -1))
    check('read with another offset meanwhile: InProgress', r3.error == ('org.bluez.Error.InProgress', 'In Progress'),
          str(r3.error))
    ctl.SetCharacteristicDelay(ECHO, ECHO_W, 'read', dbus.UInt32(0))

    # --- SetCharacteristicError: peripheral errors, exact errors, clearing
    ctl.SetCharacteristicError(ECHO, ECHO_W, 'write', 'NotAuthorized', '')
    check('SetCharacteristicError write NotAuthorized', error_of(lambda: C(ech[ECHO_W]).WriteValue([1], {})) ==
          ('org.bluez.Error.NotAuthorized', 'Operation Not Authorized'))
    ctl.SetCharacteristicError(ECHO, ECHO_W, 'write', 'org.bluez.Error.Failed', 'exactly this')
    check('SetCharacteristicError write, exact error', error_of(lambda: C(ech[ECHO_W]).WriteValue([1], {})) ==
          ('org.bluez.Error.Failed', 'exactly this'))
    ctl.SetCharacteristicError(ECHO, ECHO_W, 'write', '', '')
    check('SetCharacteristicError cleared', error_of(lambda: C(ech[ECHO_W]).WriteValue([1], {})) is None)
    ctl.SetCharacteristicError(ECHO, ECHO_W, 'read', 'InvalidOffset', '')
    check('SetCharacteristicError read InvalidOffset', error_of(lambda: C(ech[ECHO_W]).ReadValue({})) ==
          ('org.bluez.Error.InvalidArguments', 'Invalid offset'))
    ctl.SetCharacteristicError(ECHO, ECHO_W, 'read', '0x81', '')
    check('SetCharacteristicError read 0x81', error_of(lambda: C(ech[ECHO_W]).ReadValue({})) ==
          ('org.bluez.Error.Failed', 'Operation failed with ATT error: 0x81'))
    ctl.SetCharacteristicError(ECHO, ECHO_W, 'read', '', '')
    ctl.SetCharacteristicError(ECHO, ECHO_DENY, 'write', '', '')
    check('clearing restores the scenario error', error_of(lambda: C(ech[ECHO_DENY]).WriteValue([7], {})) ==
          ('org.bluez.Error.NotPermitted', 'Write not permitted'))
    ctl.SetCharacteristicError(ECHO, ECHO_N, 'notify', 'NotPermitted', '')
    check('SetCharacteristicError notify', error_of(lambda: C(ech[ECHO_N]).StartNotify()) ==
          ('org.bluez.Error.NotPermitted', 'Write not permitted'))
    notifying = dbus.Interface(bus.get_object(B, ech[ECHO_N]), PROPS).Get(CHRC, 'Notifying')
    check('... no session, Notifying false', not notifying and
          stats('devices', ECHO, 'notify_sessions') == 0)
    ctl.SetCharacteristicError(ECHO, ECHO_N, 'notify', '', '')
    check('StartNotify after clearing', error_of(lambda: C(ech[ECHO_N]).StartNotify()) is None)

    # --- a pending request when the link drops
    ctl.SetCharacteristicDelay(ECHO, ECHO_W, 'write', dbus.UInt32(1000))
    c = Call(C(ech[ECHO_W]).WriteValue, dbus.Array([0x22], signature='y'), {'type': 'request'})
    pause(0.2)
    ctl.DropConnection(ECHO)
    c.wait(5)
    check('pending write fails at once when the link drops', c.error == ('org.bluez.Error.Failed', 'Operation failed')
          and c.seconds < 0.7, '%s %.2fs' % (c.error, c.seconds or -1))
    ctl.SetCharacteristicDelay(ECHO, ECHO_W, 'write', dbus.UInt32(0))

    # --- DropConnection: one PropertiesChanged, GATT objects and sessions stay
    C(hr[u16('2a37')]).StartNotify()
    spin(lambda: bool(changes(hr[u16('2a37')], 0, 'Value')), 3)
    mark = len(events)
    ctl.DropConnection(HR)
    spin(lambda: bool(changes(dev_path(HR), mark, 'Connected')), 2)
    ch = [c for _, c in changes(dev_path(HR), mark)]
    check('DropConnection: Connected+ServicesResolved false in one signal',
          any(set(c) == {'Connected', 'ServicesResolved'} and not c['Connected'] for c in ch), str(ch))
    check('DropConnection: GATT objects kept', hr[u16('2a37')] in [str(p) for p in om.GetManagedObjects()])
    check('DropConnection counted as link loss', stats('devices', HR, 'link_losses') == 1)
    mark = len(events)
    connect_resolved(HR)
    spin(lambda: bool(changes(hr[u16('2a37')], mark, 'Value')), 3)
    check('notifications resume after reconnect', bool(changes(hr[u16('2a37')], mark, 'Value')))

    # --- GetStats: sessions, duplicate StartNotify calls, notifications, ResetStats
    calls = stats('devices', HR, 'start_notify_calls')
    C(hr[u16('2a37')]).StartNotify()
    s = stats('devices', HR)
    check('GetStats: repeated StartNotify counted, one session', s['start_notify_calls'] == calls + 1
          and s['start_notify_calls_by_uuid'][u16('2a37')] >= 2
          and dict(s['notify_sessions_by_uuid']) == {u16('2a37'): 1} and s['notifying'] == 1,
          str(dict(s['notify_sessions_by_uuid'])))
    check('GetStats: notifications counted', s['notifications'] >= 2 and stats('notifications') >= s['notifications'],
          str(int(s['notifications'])))
    check('GetStats: connects/connected', s['connects'] == 2 and s['connected'] and stats('connected_devices') == 1,
          '%d connects, %d connected devices' % (s['connects'], stats('connected_devices')))
    ctl.ResetStats()
    check('ResetStats', stats('devices', HR, 'connects') == 0 and stats('devices', HR, 'notify_sessions') == 1)
    C(hr[u16('2a37')]).StopNotify()

    # --- FailNextConnect: le-connection-abort-by-local flashes Connected true -> false
    D(HR).Disconnect()
    pause(0.2)  # let the disconnect's signals arrive before the mark
    ctl.FailNextConnect(HR, 'org.bluez.Error.Failed', 'le-connection-abort-by-local', dbus.UInt32(2))
    mark = len(events)
    c = Call(D(HR).Connect).wait(5)
    t_reply = c.t0 + c.seconds
    spin(lambda: len(changes(dev_path(HR), mark, 'Connected')) >= 2, 2)
    flips = [(t, bool(x['Connected'])) for t, x in changes(dev_path(HR), mark, 'Connected')]
    check('FailNextConnect: error', c.error == ('org.bluez.Error.Failed', 'le-connection-abort-by-local'), str(c.error))
    check('FailNextConnect: Connected true, reply, Connected false',
          [f for _, f in flips] == [True, False] and flips[0][0] <= t_reply <= flips[1][0],
          str([(round(t - c.t0, 3), f) for t, f in flips]) + ' reply %.3f' % c.seconds)
    check('FailNextConnect: second attempt fails too', error_of(D(HR).Connect) ==
          ('org.bluez.Error.Failed', 'le-connection-abort-by-local'))
    spin(lambda: not dprop(HR, 'Connected'), 2)
    check('FailNextConnect: third attempt connects', error_of(D(HR).Connect) is None and bool(dprop(HR, 'Connected')))
    check('GetStats: connect failures', stats('devices', HR, 'connect_failures') == 2)
    D(HR).Disconnect()
    pause(0.2)
    ctl.FailNextConnect(HR, 'InProgress', '', dbus.UInt32(1))
    mark = len(events)
    t0 = time.time()
    check('FailNextConnect InProgress: at once', error_of(D(HR).Connect) == ('org.bluez.Error.InProgress', 'In Progress')
          and time.time() - t0 < 0.5 and not changes(dev_path(HR), mark, 'Connected'))
    out = simctl('FailNextConnectWith', HR, 'Failed', 'le-connection-abort-by-local', '1', 'link_up=false', 'delay_ms=400')
    check('simctl FailNextConnectWith', out.returncode == 0, out.stderr.strip())
    mark = len(events)
    c = Call(D(HR).Connect).wait(5)
    check('FailNextConnectWith: no link, after the delay', c.error is not None and c.seconds >= 0.35
          and not changes(dev_path(HR), mark, 'Connected'), '%s %.2fs' % (c.error, c.seconds))

    # --- SetResolveBehaviour
    ctl.SetResolveBehaviour(HR, 'resolved-before-gatt:1s')
    pause(0.1)
    check('resolved-before-gatt drops cached GATT objects', not chrcs(HR))
    mark = len(events)
    D(HR).Connect()
    spin(lambda: any(m == 'InterfacesAdded' and str(e[0]).startswith(dev_path(HR) + '/')
                     for _, m, _, e in events[mark:]), 4)
    resolved = [t for t, x in changes(dev_path(HR), mark, 'ServicesResolved') if x['ServicesResolved']]
    added = [t for t, m, _, e in events[mark:] if m == 'InterfacesAdded' and str(e[0]).startswith(dev_path(HR) + '/')]
    check('resolved-before-gatt: ServicesResolved, GATT objects 1 s later', resolved and added
          and 0.9 <= added[0] - resolved[0] < 2, str([round(x - resolved[0], 2) for x in added[:1]]) if resolved else '')
    D(HR).Disconnect()
    ctl.SetResolveBehaviour(HR, 'never-resolve')
    D(HR).Connect()
    pause(1.0)
    check('never-resolve', bool(dprop(HR, 'Connected')) and not dprop(HR, 'ServicesResolved'))
    D(HR).Disconnect()
    ctl.SetResolveBehaviour(HR, 'delayed:1.5s')
    mark = len(events)
    t0 = time.time()
    D(HR).Connect()
    spin(lambda: bool(dprop(HR, 'ServicesResolved')), 4)
    check('delayed:1.5s', bool(dprop(HR, 'ServicesResolved')) and time.time() - t0 >= 1.4, '%.2fs' % (time.time() - t0))
    ctl.SetResolveBehaviour(HR, 'normal')

    # --- RemoveDeviceObject: gone while connected; discovery finds it again
    mark = len(events)
    ctl.RemoveDeviceObject(HR)
    spin(lambda: any(m == 'InterfacesRemoved' and str(e[0]) == dev_path(HR) for _, m, _, e in events[mark:]), 2)
    check('RemoveDeviceObject: Connected false, then InterfacesRemoved',
          bool(changes(dev_path(HR), mark, 'Connected')) and
          any(m == 'InterfacesRemoved' and str(e[0]) == dev_path(HR) for _, m, _, e in events[mark:]))
    check('RemoveDeviceObject: not in GetManagedObjects', dev_path(HR) not in [str(p) for p in om.GetManagedObjects()])

    # --- FailNextStartDiscovery, StallDiscovery
    ctl.FailNextStartDiscovery('org.bluez.Error.InProgress', 'Operation already in progress')
    check('FailNextStartDiscovery', error_of(ad.StartDiscovery) ==
          ('org.bluez.Error.InProgress', 'Operation already in progress'))
    ctl.StallDiscovery()
    mark = len(events)
    ad.StartDiscovery()
    pause(1.5)
    check('StallDiscovery: Discovering but nothing found', bool(adp.Get(ADAPTER, 'Discovering'))
          and not any(m == 'InterfacesAdded' for _, m, _, e in events[mark:]) and stats('adapters', 'hci0', 'stalled'))
    ad.StopDiscovery()
    pause(0.1)
    ad.StartDiscovery()
    spin(lambda: any(m == 'InterfacesAdded' and str(e[0]) == dev_path(HR) for _, m, _, e in events[mark:]), 3)
    check('restarted discovery finds the device again',
          any(m == 'InterfacesAdded' and str(e[0]) == dev_path(HR) for _, m, _, e in events[mark:]))

    # --- SetInRange: out of range drops the link and stops advertising; back in range advertises
    connect_resolved(HR)
    mark = len(events)
    ctl.SetInRange(HR, False)
    spin(lambda: bool(changes(dev_path(HR), mark, 'Connected')), 2)
    check('SetInRange false: link lost', not dprop(HR, 'Connected') and not dprop(HR, 'ServicesResolved'))
    mark = len(events)
    pause(1.6)
    check('SetInRange false: no advertisements', not changes(dev_path(HR), mark, 'RSSI'))
    ctl.SetInRange(HR, True)
    spin(lambda: bool(changes(dev_path(HR), mark, 'RSSI')), 3)
    check('SetInRange true: advertises again', bool(changes(dev_path(HR), mark, 'RSSI')))
    ad.StopDiscovery()

    # --- SetPowered: a power cycle drops the links
    connect_resolved(HR)
    mark = len(events)
    ctl.SetPowered(False)
    spin(lambda: bool(changes(hci, mark, 'Powered')) and bool(changes(dev_path(HR), mark, 'Connected')), 2)
    check('SetPowered false: Powered false, links dropped', not adp.Get(ADAPTER, 'Powered') and not dprop(HR, 'Connected')
          and not dprop(ECHO, 'Connected') and bool(changes(hci, mark, 'Powered')),
          'powered %s, hr %s, echo %s, signals %s' % (adp.Get(ADAPTER, 'Powered'), dprop(HR, 'Connected'),
                                                    dprop(ECHO, 'Connected'), changes(hci, mark)))
    check('SetPowered false: Connect -> NotReady', error_of(D(HR).Connect) == ('org.bluez.Error.NotReady', 'Resource Not Ready'))
    ctl.SetPowered(True)
    check('SetPowered true', bool(adp.Get(ADAPTER, 'Powered')) and connect_resolved(HR))
    mark = len(events)
    ctl.SetAdapterPowered('hci0', False)
    spin(lambda: bool(changes(hci, mark, 'Powered')) and bool(changes(dev_path(HR), mark, 'Connected')), 2)
    check('SetAdapterPowered hci0 false', not adp.Get(ADAPTER, 'Powered') and not dprop(HR, 'Connected'))
    check('SetAdapterPowered unknown adapter', (error_of(lambda: ctl.SetAdapterPowered('hci9', True)) or ('',))[0] ==
          'org.bluezsim.Error.UnknownAdapter')
    ctl.SetAdapterPowered('hci0', True)
    check('SetAdapterPowered hci0 true', bool(adp.Get(ADAPTER, 'Powered')) and connect_resolved(HR))

    # --- RemoveAdapter / AddAdapter: like unplugging the controller
    mark = len(events)
    ctl.RemoveAdapter()
    spin(lambda: any(m == 'InterfacesRemoved' and str(e[0]) == hci for _, m, _, e in events[mark:]), 2)
    removed = [str(e[0]) for _, m, _, e in events[mark:] if m == 'InterfacesRemoved']
    check('RemoveAdapter: devices then the adapter removed', removed and removed[-1] == hci and dev_path(HR) in removed
          and not any(str(p).startswith(hci) for p in om.GetManagedObjects()))
    check('RemoveAdapter: adapter calls fail', (error_of(ad.StartDiscovery) or ('',))[0] ==
          'org.freedesktop.DBus.Error.UnknownObject')
    mark = len(events)
    ctl.AddAdapter()
    spin(lambda: any(m == 'InterfacesAdded' and str(e[0]) == dev_path(HR) for _, m, _, e in events[mark:]), 2)
    objs = om.GetManagedObjects()
    check('AddAdapter: adapter and known devices back, not connected', hci in objs and dev_path(HR) in objs
          and dev_path(ECHO) in objs and not objs[dev_path(HR)][DEV]['Connected'] and dev_path(ENV) not in objs)
    check('AddAdapter: connect again', connect_resolved(HR))
    ctl.RemoveAdapterNamed('hci0')
    check('RemoveAdapterNamed hci0', hci not in [str(p) for p in om.GetManagedObjects()])
    ctl.AddAdapterNamed('hci0')
    objs = om.GetManagedObjects()
    check('AddAdapterNamed hci0', hci in objs and dev_path(HR) in objs and not objs[dev_path(HR)][DEV]['Connected'])
    connect_resolved(HR)
    out = simctl('GetStats', 'devices', HR, 'connected')
    check('simctl GetStats KEY...', out.returncode == 0 and out.stdout.strip() == 'true', out.stdout.strip() + out.stderr.strip())
    D(HR).Disconnect()

    # --- bluetoothd restart: the process goes away and comes back with its known devices
    if args.sim_dir:
        before = len(open(args.write_log).read().splitlines()) if args.write_log else 0
        mark_owner = len(owners)
        env = dict(os.environ)
        out = subprocess.run([os.path.join(HERE, 'restart-sim'), args.sim_dir, '--down', '0.5'], env=env,
                             capture_output=True, text=True)
        check('restart-sim', out.returncode == 0, out.stderr.strip()[-200:])
        spin(lambda: len(owners) >= mark_owner + 2, 5)
        gone = [o for o in owners[mark_owner:] if o[2] == '']
        back = [o for o in owners[mark_owner:] if o[2] != '']
        check('restart: org.bluez left the bus and came back', bool(gone) and bool(back), str(owners[mark_owner:]))
        # Proxies are bound to the unique name of the old bluetoothd: get new ones.
        om = dbus.Interface(bus.get_object(B, '/'), OM)
        objs = om.GetManagedObjects()
        check('restart: known devices back, not connected', dev_path(HR) in objs and dev_path(ECHO) in objs
              and not objs[dev_path(HR)][DEV]['Connected'] and dev_path(ENV) not in objs
              and u16('1800') in [str(u) for u in objs[dev_path(HR)][DEV]['UUIDs']])
        check('restart: connect a known device', connect_resolved(HR))
        if args.write_log:
            check('restart: write log kept', len(open(args.write_log).read().splitlines()) >= before)
        D(HR).Disconnect()

    print('SELFTEST-FAULTS %s (%d failed)' % ('PASS' if not failures else 'FAIL', len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
