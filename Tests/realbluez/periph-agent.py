#!/usr/bin/python3
"""The peripheral's own pairing agent for the realbluez suite (run INSIDE the VM with Debian's
/usr/bin/python3 + python3-dbus + python3-gi). It stands for the pairing UI of the peripheral
device, which in the VM lives in the same bluetoothd as the bridge's central (issue 18; README
"The pairing agent in one bluetoothd for both sides").

  periph-agent.py --adapter /org/bluez/hci0 --log FILE [--follow LOG --pattern TEXT]
                  [--capability NoInputNoOutput]

Registers an org.bluez.Agent1 (/org/rbtest/periph_agent) with AgentManager1 and makes it the
default agent (RequestDefaultAgent). bluetoothd 5.66 asks the *default* agent about pairings it
did not start itself (agent_get(NULL): the head of its default-agents list, which each
RequestDefaultAgent pushes to the front), i.e. the peripheral side's RequestAuthorization /
RequestConfirmation when the central pairs; a `Device1.Pair` keeps the agent of its caller.

Answers: RequestAuthorization, RequestConfirmation and AuthorizeService are accepted ONLY for
device objects under --adapter (the peripheral's own adapter); everything else (other adapters'
devices, RequestPasskey, RequestPinCode) is rejected with org.bluez.Error.Rejected.
Display*, Cancel and Release are logged.

--follow LOG --pattern TEXT: whenever a line containing TEXT is appended to LOG (polled every
0.1 s, from its size at start), call RequestDefaultAgent again: the bridge's agent calls it at each
registration and would otherwise take the peripheral side's requests (and reject them).

Every event is one line in --log, flushed: "<unix time> <event> ...", e.g.
  1795325471.123 default agent (registered, NoInputNoOutput)
  1795325472.456 RequestAuthorization /org/bluez/hci0/dev_00_AA_01_01_00_01 -> accepted
  1795325480.001 RequestConfirmation /org/bluez/hci1/dev_00_AA_01_00_00_00 123456 -> rejected (not under /org/bluez/hci0)
Runs until SIGTERM/SIGINT, then UnregisterAgent ("unregistered").
"""
import argparse
import os
import signal
import sys
import time

AGENT_PATH = '/org/rbtest/periph_agent'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--adapter', required=True, help='the peripheral adapter, e.g. /org/bluez/hci0')
    ap.add_argument('--log', required=True)
    ap.add_argument('--capability', default='NoInputNoOutput')
    ap.add_argument('--follow', help='a log file to watch (the bridge log)')
    ap.add_argument('--pattern', default='pairing agent registered')
    a = ap.parse_args()

    import dbus
    import dbus.service
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    out = open(a.log, 'a', buffering=1)
    prefix = a.adapter.rstrip('/') + '/'

    def log(line):
        out.write('%.3f %s\n' % (time.time(), line))
        out.flush()

    class Rejected(dbus.DBusException):
        _dbus_error_name = 'org.bluez.Error.Rejected'

    def decide(method, device, extra=''):
        what = '%s %s%s' % (method, device, extra)
        if str(device).startswith(prefix):
            log('%s -> accepted' % what)
            return
        log('%s -> rejected (not under %s)' % (what, a.adapter))
        raise Rejected('not a device of the peripheral adapter %s' % a.adapter)

    class Agent(dbus.service.Object):
        @dbus.service.method('org.bluez.Agent1', in_signature='', out_signature='')
        def Release(self):
            log('Release')

        @dbus.service.method('org.bluez.Agent1', in_signature='os', out_signature='')
        def AuthorizeService(self, device, uuid):
            decide('AuthorizeService', device, ' ' + str(uuid))

        @dbus.service.method('org.bluez.Agent1', in_signature='o', out_signature='s')
        def RequestPinCode(self, device):
            log('RequestPinCode %s -> rejected (no PIN codes)' % device)
            raise Rejected('no PIN codes')

        @dbus.service.method('org.bluez.Agent1', in_signature='o', out_signature='u')
        def RequestPasskey(self, device):
            log('RequestPasskey %s -> rejected (no passkey to type)' % device)
            raise Rejected('no passkey to type')

        @dbus.service.method('org.bluez.Agent1', in_signature='ouq', out_signature='')
        def DisplayPasskey(self, device, passkey, entered):
            log('DisplayPasskey %s %06d (%d typed)' % (device, passkey, entered))

        @dbus.service.method('org.bluez.Agent1', in_signature='os', out_signature='')
        def DisplayPinCode(self, device, pincode):
            log('DisplayPinCode %s %s' % (device, pincode))

        @dbus.service.method('org.bluez.Agent1', in_signature='ou', out_signature='')
        def RequestConfirmation(self, device, passkey):
            decide('RequestConfirmation', device, ' %06d' % passkey)

        @dbus.service.method('org.bluez.Agent1', in_signature='o', out_signature='')
        def RequestAuthorization(self, device):
            decide('RequestAuthorization', device)

        @dbus.service.method('org.bluez.Agent1', in_signature='', out_signature='')
        def Cancel(self):
            log('Cancel')

    Agent(bus, AGENT_PATH)
    manager = dbus.Interface(bus.get_object('org.bluez', '/org/bluez'), 'org.bluez.AgentManager1')
    try:
        manager.RegisterAgent(AGENT_PATH, a.capability)
        manager.RequestDefaultAgent(AGENT_PATH)
    except dbus.DBusException as e:
        log('register failed: %s' % e)
        sys.exit(1)
    log('default agent (registered, %s; answers for %s*)' % (a.capability, prefix))

    loop = GLib.MainLoop()
    follow = {'off': os.path.getsize(a.follow) if a.follow and os.path.exists(a.follow) else 0, 'rest': b''}

    def poll_follow():
        try:
            with open(a.follow, 'rb') as f:
                f.seek(follow['off'])
                data = f.read()
        except OSError:
            return True
        follow['off'] += len(data)
        lines = (follow['rest'] + data).split(b'\n')
        follow['rest'] = lines.pop()
        if any(a.pattern.encode() in line for line in lines):
            try:
                manager.RequestDefaultAgent(AGENT_PATH)
                log('default agent again (after "%s" in %s)' % (a.pattern, a.follow))
            except dbus.DBusException as e:
                log('RequestDefaultAgent failed: %s' % e)
        return True

    if a.follow:
        GLib.timeout_add(100, poll_follow)

    def stop():
        try:
            manager.UnregisterAgent(AGENT_PATH)
            log('unregistered')
        except dbus.DBusException as e:
            log('UnregisterAgent failed: %s' % e)
        loop.quit()
        return False

    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, stop)
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGINT, stop)
    loop.run()


if __name__ == '__main__':
    main()
