#!/usr/bin/python3
"""BTHome v2 advertiser for the realbluez suite (run INSIDE the VM with Debian's
/usr/bin/python3 + python3-dbus + python3-gi; `frame` needs python3-cryptography
only for encrypted frames and runs on the host too).

  bthome-adv.py frame [--packet-id N] [--temperature C] [--humidity P] [--battery P]
                      [--key HEX --mac AA:BB:.. --counter N]
        print BTHome v2 service data (UUID fcd2) as hex: device-information byte
        0x40 (0x41 encrypted), the objects in id order (packet id 0x00, battery 0x01,
        temperature 0x02, humidity 0x03); with --key: AES-CCM (4-byte MIC), nonce =
        MAC (display order) + d2 fc + 0x41 + counter (4, little endian), frame =
        0x41 + ciphertext + counter + MIC (bthome.io/encryption).

  bthome-adv.py advertise --adapter /org/bluez/hci0 --file F [--type peripheral|broadcast]
                          [--instances N] [--uuid fcd2]
        register N LEAdvertisement1 objects on the adapter's LEAdvertisingManager1
        whose ServiceData is {UUID: bytes.fromhex(contents of F)}; whenever F changes
        (polled every 0.2 s) unregister them and register new ones with the new
        data (a new advertising report, like a sensor's next packet). Runs until
        SIGTERM/SIGINT; bluetoothd drops the advertisements when it exits.
        Prints (flushes) one line per event: "registered N instance(s) data HEX",
        "register failed: ERROR", "unregistered", "ActiveInstances=N".

Several instances with the same data make the kernel rotate them every 2 s; each
rotation re-enables advertising, and btvirt sends advertising reports only then
(and at scan enable): see shared/realbluez/README.md.
"""
import argparse
import signal
import struct
import sys


def frame(a):
    objects = b''
    if a.packet_id is not None:
        objects += bytes([0x00, a.packet_id & 0xff])
    if a.battery is not None:
        objects += bytes([0x01, a.battery])
    if a.temperature is not None:
        objects += bytes([0x02]) + struct.pack('<h', round(a.temperature * 100))
    if a.humidity is not None:
        objects += bytes([0x03]) + struct.pack('<H', round(a.humidity * 100))
    if not a.key:
        return bytes([0x40]) + objects
    from cryptography.hazmat.primitives.ciphers.aead import AESCCM
    key = bytes.fromhex(a.key)
    mac = bytes.fromhex(a.mac.replace(':', ''))
    counter = struct.pack('<I', a.counter)
    nonce = mac + bytes([0xd2, 0xfc, 0x41]) + counter
    sealed = AESCCM(key, tag_length=4).encrypt(nonce, objects, None)
    return bytes([0x41]) + sealed[:-4] + counter + sealed[-4:]


def advertise(a):
    import dbus
    import dbus.service
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    manager = dbus.Interface(bus.get_object('org.bluez', a.adapter), 'org.bluez.LEAdvertisingManager1')
    uuid = a.uuid if len(a.uuid) > 8 else '0000%s-0000-1000-8000-00805f9b34fb' % a.uuid.lower().rjust(4, '0')

    def say(msg):
        print(msg, flush=True)

    class Advertisement(dbus.service.Object):
        def __init__(self, path, data):
            self.path = path
            self.data = data
            dbus.service.Object.__init__(self, bus, path)

        def props(self):
            return {
                'Type': a.type,
                'ServiceData': dbus.Dictionary({uuid: dbus.Array(self.data, signature='y')}, signature='sv'),
            }

        @dbus.service.method('org.freedesktop.DBus.Properties', in_signature='s', out_signature='a{sv}')
        def GetAll(self, interface):
            return self.props()

        @dbus.service.method('org.bluez.LEAdvertisement1', in_signature='', out_signature='')
        def Release(self):
            say('released %s' % self.path)

    # Every call to bluetoothd is asynchronous: RegisterAdvertisement makes bluetoothd call
    # our GetAll, which a blocking call would leave unanswered (the registration then
    # times out and bluetoothd advertises without our data).
    state = {'ads': [], 'data': None, 'gen': 0, 'busy': False, 'want': None}

    def active():
        try:
            return int(dbus.Interface(bus.get_object('org.bluez', a.adapter), 'org.freedesktop.DBus.Properties')
                       .Get('org.bluez.LEAdvertisingManager1', 'ActiveInstances'))
        except dbus.DBusException as e:
            return 'unknown (%s)' % e.get_dbus_name()

    def unregister_all(then):
        ads, state['ads'] = state['ads'], []
        if not ads:
            then()
            return
        left = [len(ads)]

        def done(ad, err=None):
            if err is not None:
                say('unregister %s failed: %s' % (ad.path, err))
            ad.remove_from_connection()
            left[0] -= 1
            if left[0] == 0:
                say('unregistered %d instance(s)' % len(ads))
                then()
        for ad in ads:
            manager.UnregisterAdvertisement(ad.path, reply_handler=lambda ad=ad: done(ad),
                                            error_handler=lambda e, ad=ad: done(ad, e))

    def register_all(data, then):
        state['gen'] += 1
        gen = state['gen']

        def one(i):
            if i == a.instances:
                say('registered %d instance(s) data %s' % (len(state['ads']), data.hex()))
                say('ActiveInstances=%s' % active())
                then()
                return
            ad = Advertisement('/org/bluez/rbtest/bthome%d_%d' % (gen, i), data)

            def ok():
                state['ads'].append(ad)
                one(i + 1)

            def err(e):
                ad.remove_from_connection()
                say('register failed: %s: %s' % (e.get_dbus_name(), e.get_dbus_message()))
                one(a.instances)
            manager.RegisterAdvertisement(ad.path, dbus.Dictionary({}, signature='sv'),
                                          reply_handler=ok, error_handler=err)
        one(0)

    def apply():
        # one change at a time; the latest data wins
        if state['busy'] or state['want'] is None:
            return
        data, state['want'], state['busy'] = state['want'], None, True

        def finished():
            state['busy'] = False
            apply()
        unregister_all(lambda: register_all(data, finished))

    def poll():
        try:
            text = open(a.file).read().strip()
        except OSError:
            return True
        if text and text != state['data']:
            state['data'] = text
            try:
                state['want'] = bytes.fromhex(text)
            except ValueError:
                say('bad hex in %s: %r' % (a.file, text))
                return True
            apply()
        return True

    loop = GLib.MainLoop()

    def stop():
        say('signal: stopping')
        # quit once the advertisements are gone (bluetoothd would drop them anyway when we exit)
        GLib.timeout_add(3000, loop.quit)
        unregister_all(loop.quit)
        return False

    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, stop)
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGINT, stop)
    GLib.idle_add(lambda: poll() and False)
    GLib.timeout_add(200, poll)
    loop.run()
    say('stopped')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    f = sub.add_parser('frame')
    f.add_argument('--packet-id', type=int)
    f.add_argument('--temperature', type=float)
    f.add_argument('--humidity', type=float)
    f.add_argument('--battery', type=int)
    f.add_argument('--key')
    f.add_argument('--mac')
    f.add_argument('--counter', type=lambda s: int(s, 0), default=1)
    v = sub.add_parser('advertise')
    v.add_argument('--adapter', required=True)
    v.add_argument('--file', required=True)
    v.add_argument('--type', default='peripheral', choices=['peripheral', 'broadcast'])
    v.add_argument('--instances', type=int, default=2)
    v.add_argument('--uuid', default='fcd2')
    a = p.parse_args()
    if a.cmd == 'frame':
        if a.key and not a.mac:
            p.error('--key needs --mac')
        print(frame(a).hex())
    else:
        advertise(a)


if __name__ == '__main__':
    main()
