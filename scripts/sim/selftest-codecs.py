#!/usr/bin/python3
"""Cross-checks bluez-sim's own encoders against independent implementations: it starts a simulator itself
(scripts/sim/start-sim, $BLUEZ_SIM or .build/debug/bluez-sim) with the scenario below, discovers, and records
what a BlueZ client sees (the ServiceData of every advertisement, in PropertiesChanged; the addresses the phone
advertises from), then hands that to scripts/sim/decode-codecs.py run by $SIM_CODEC_PYTHON (a Python with
Home Assistant's `bthome-ble` and `cryptography`: scripts/check-sim provides its venv), which

  decodes every BTHome v2 frame with bthome-ble (plain; encrypted with the bindkey, and refused without it or
  with another key) and compares each value with what the scenario says the simulator sends for that packet,
  and resolves every private address of the phone with its IRK (AES from `cryptography`, checked first on the
  Bluetooth Core specification's `ah` sample).

    SIM_CODEC_PYTHON=/path/to/venv/bin/python scripts/sim/selftest-codecs.py   # ~5 s; non-zero on failure
"""
import json
import os
import subprocess
import sys
import tempfile

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simtest import *  # noqa: E402,F401,F403

HERE = os.path.dirname(os.path.abspath(__file__))
PLAIN, SEALED, PHONE = 'C0:FF:EE:00:00:11', 'C0:FF:EE:00:00:12', 'C0:FF:EE:00:00:13'
BINDKEY = '231d39c1d7cc1ab1aee224cd096db932'
IRK = 'ec0234a357c8ad05341010a60a397d9b'
# What the scenario says each broadcaster sends (the centres of its walk), by address.
BROADCASTS = {
    PLAIN: {'temperature': -3.25, 'humidity': 40.0, 'battery': 100, 'button_every': 4, 'bindkey': None},
    SEALED: {'temperature': 20.0, 'humidity': 55.5, 'battery': 88, 'button_every': 3, 'bindkey': BINDKEY},
}
FRAMES = 140        # per broadcaster: more than two turns of the 64-packet walk
ADDRESSES = 3       # private addresses of the phone


def scenario():
    lines = ['settings: { advertise_delay: 10ms, advertise_jitter: 0ms, rssi_interval: 50ms, temporary_timeout: 600ms }',
             'devices:']
    for address, b in BROADCASTS.items():
        key = ', bindkey: "%s"' % b['bindkey'] if b['bindkey'] else ''
        lines.append('  - { address: "%s", address_type: random, rssi: -55, advertise: [], broadcast: '
                     '{ kind: bthome_v2, interval: 20ms, temperature: %s, humidity: %s, battery: %d, button_every: %d%s } }'
                     % (address, b['temperature'], b['humidity'], b['battery'], b['button_every'], key))
    lines.append('  - { name: Phone, address: "%s", irk: "%s", rotate_every: 1s, rssi: -60 }' % (PHONE, IRK))
    return '\n'.join(lines) + '\n'


class Sim:
    def __init__(self, work):
        self.dir = os.path.join(work, 'sim')
        path = os.path.join(work, 'codecs.yaml')
        with open(path, 'w') as f:
            f.write(scenario())
        self.address = subprocess.run([os.path.join(HERE, 'start-sim'), self.dir, path],
                                      check=True, capture_output=True, text=True).stdout.strip()
        self.bus = dbus.bus.BusConnection(self.address)
        self.frames = {}      # address -> [service data hex], in the order signalled
        self.phone = set()    # addresses of objects named Phone
        self.bus.add_signal_receiver(self._changed, 'PropertiesChanged', PROPS, B, path_keyword='path')
        self.bus.add_signal_receiver(self._added, 'InterfacesAdded', OM, B)

    def _added(self, path, interfaces):
        d = interfaces.get(DEV)
        if d is None:
            return
        if str(d.get('Name', '')) == 'Phone':
            self.phone.add(str(d['Address']))

    def _changed(self, iface, changed, invalidated, path=None):
        if iface != DEV or 'ServiceData' not in changed:
            return
        data = changed['ServiceData'].get(u16('fcd2'))
        if data is not None:  # the object path ends in dev_AA_BB_CC_DD_EE_FF
            address = str(path).rsplit('/', 1)[-1][4:].replace('_', ':')
            self.frames.setdefault(address, []).append(bytes(bytearray(data)).hex())

    def stop(self):
        subprocess.run([os.path.join(HERE, 'stop'), self.dir])


def main():
    python = os.environ.get('SIM_CODEC_PYTHON')
    if not python:
        print('FAIL SIM_CODEC_PYTHON is not set (a Python with bthome-ble: scripts/check-sim sets it)')
        return 1
    work = tempfile.mkdtemp(prefix='bluez-sim-codecs.')
    sim = Sim(work)
    try:
        adapter = dbus.Interface(sim.bus.get_object(B, '/org/bluez/hci0'), ADAPTER)
        adapter.StartDiscovery()

        def enough():
            return (all(len(sim.frames.get(a, [])) >= FRAMES for a in BROADCASTS)
                    and len(sim.phone) >= ADDRESSES)
        spin(enough, 20)
        for address in BROADCASTS:
            check('frames of %s' % address, len(sim.frames.get(address, [])) >= FRAMES,
                  '(%d signalled)' % len(sim.frames.get(address, [])))
        check('private addresses of the phone', len(sim.phone) >= ADDRESSES, '(%d seen)' % len(sim.phone))
        observed = {
            'broadcasts': [dict(b, address=a, frames=sim.frames.get(a, [])) for a, b in BROADCASTS.items()],
            'phone': {'identity': PHONE, 'irk': IRK, 'addresses': sorted(sim.phone)},
        }
        with open(os.path.join(work, 'observed.json'), 'w') as f:
            json.dump(observed, f)
    finally:
        sim.stop()
    decoded = subprocess.run([python, os.path.join(HERE, 'decode-codecs.py'), os.path.join(work, 'observed.json')])
    check('decode-codecs.py', decoded.returncode == 0, '(exit %d)' % decoded.returncode)
    print('%d failure(s)' % len(failures))
    if not failures:
        subprocess.run(['rm', '-rf', work])
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
