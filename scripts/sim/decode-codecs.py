"""The independent half of scripts/sim/selftest-codecs.py, run by a Python with Home Assistant's `bthome-ble` and
`cryptography` (scripts/check-sim's venv): reads what a BlueZ client saw of the simulator (the JSON that
selftest-codecs.py writes) and checks it without any of the project's code.

  BTHome v2: every frame decoded by bthome-ble (a new decoder per frame, so that its packet-id and counter
  bookkeeping drops nothing); its values must be what the scenario says the simulator sends for that packet:
  the packet id, the battery, the temperature and humidity of the walk around the scenario's centres
  (Sources/BluezSimKit/Values/BroadcastFrames.swift: +-0.5 degC and +-2 % over 64 packets, phase =
  (packet mod 64 - 32) / 32, rounded to the objects' 0.01 steps), a button press on every `button_every`-th
  packet; the device information byte 0x40 (plain) or 0x41 (encrypted), never trigger-based. The packet number
  is the frame's counter (encrypted) or its packet id (plain: then only the packet mod 256 is known, enough for
  the walk and for a `button_every` that divides 256). An encrypted frame must not decode without its key or
  with another one.

  Resolvable private addresses: this file's `ah` is first checked on the Bluetooth Core specification's sample
  (Vol 3 Part H, Appendix D.7: IRK ec0234a357c8ad05341010a60a397d9b, prand 708194, hash 0dfbaa); then every
  address the phone advertised must be a resolvable private address (top bits 0b01, random bits neither all 0
  nor all 1) whose hash is ah(IRK, prand), and none its identity address.

    decode-codecs.py OBSERVED.json     # one line per check; exit 1 on any failure
"""
import json
import logging
import sys
from decimal import ROUND_HALF_UP, Decimal

logging.disable(logging.CRITICAL)
from bthome_ble import BTHomeBluetoothDeviceData  # noqa: E402
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402
from habluetooth import BluetoothServiceInfoBleak  # noqa: E402

failures = []


def check(name, ok, detail=''):
    """Prints `ok NAME DETAIL` or `FAIL NAME DETAIL` (selftest style) and remembers failures."""
    print('%-4s %s %s' % ('ok' if ok else 'FAIL', name, detail), flush=True)
    if not ok:
        failures.append(name)


# --- BTHome v2

def decode(address, data, key):
    """bthome-ble's reading of one frame: {name: value} of its sensors and events (signal strength left out)."""
    device = BTHomeBluetoothDeviceData(bindkey=key)
    info = BluetoothServiceInfoBleak(
        name='sim', address=address, rssi=-60, manufacturer_data={},
        service_data={'0000fcd2-0000-1000-8000-00805f9b34fb': data}, service_uuids=[], source='',
        device=None, advertisement=None, connectable=False, time=1000.0, tx_power=None)
    update = device.update(info)
    found = {k.key: v.native_value for k, v in update.entity_values.items() if k.key != 'signal_strength'}
    found.update({k.key: v.event_type for k, v in update.events.items()})
    return found


def steps(value):
    """`value` in 0.01 steps, halves away from zero (as the sensor rounds)."""
    return int(Decimal(value * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def expected(b, packet):
    """What the scenario says the simulator sends in packet `packet` of broadcaster `b`."""
    phase = ((packet % 64) - 32) / 32
    values = {
        'packet_id': packet % 256,
        'battery': b['battery'],
        'temperature': steps(b['temperature'] + 0.5 * phase) / 100,
        'humidity': steps(b['humidity'] + 2 * phase) / 100,
    }
    if packet % b['button_every'] == 0:
        values['button'] = 'press'
    return values


def check_broadcaster(b):
    address, frames = b['address'], [bytes.fromhex(f) for f in b['frames']]
    key = bytes.fromhex(b['bindkey']) if b['bindkey'] else None
    wrong_key = bytes([key[0] ^ 0x01]) + key[1:] if key else None
    differences, presses, phases = [], 0, set()
    refused_without_key = refused_wrong_key = 0
    for data in frames:
        head = 0x41 if key else 0x40
        if data[0] != head:
            differences.append('%s: device information 0x%02x, not 0x%02x' % (data.hex(), data[0], head))
            continue
        found = decode(address, data, key)
        if key:
            packet = int.from_bytes(data[-8:-4], 'little')  # the counter, before the 4-byte MIC
            if 'temperature' not in decode(address, data, None):
                refused_without_key += 1
            if 'temperature' not in decode(address, data, wrong_key):
                refused_wrong_key += 1
        else:
            packet = found.get('packet_id', -1)
            if 256 % b['button_every'] != 0:
                differences.append('button_every %d does not divide 256: a plain frame cannot tell' % b['button_every'])
                break
        want = expected(b, packet)
        if set(found) != set(want) or any(abs(found[k] - v) > 1e-6 if isinstance(v, float) else found[k] != v
                                          for k, v in want.items()):
            differences.append('%s (packet %d): bthome-ble %r, the scenario %r' % (data.hex(), packet, found, want))
        presses += 'button' in found
        phases.add(packet % 64)
    name = '%s (%s)' % (address, 'encrypted' if key else 'plain')
    check('bthome-ble decodes %s as the scenario says' % name, not differences and len(frames) > 0,
          '(%d frames, %d button presses, %d of the 64 walk positions)' % (len(frames), presses, len(phases)))
    for d in differences[:10]:
        print('     ' + d)
    check('%s: button presses and the whole walk seen' % name, presses > 0 and len(phases) == 64)
    if key:
        check('%s: no frame decodes without its key' % name, refused_without_key == len(frames),
              '(%d of %d refused)' % (refused_without_key, len(frames)))
        check('%s: no frame decodes with another key' % name, refused_wrong_key == len(frames),
              '(%d of %d refused)' % (refused_wrong_key, len(frames)))


# --- resolvable private addresses

def ah(irk, prand):
    """Core Vol 3 Part H 2.2.2: e(irk, 104 zero bits || prand) mod 2^24, with `cryptography`'s AES."""
    encryptor = Cipher(algorithms.AES(irk), modes.ECB()).encryptor()
    block = encryptor.update(bytes(13) + prand.to_bytes(3, 'big')) + encryptor.finalize()
    return int.from_bytes(block[-3:], 'big')


def check_phone(p):
    sample = ah(bytes.fromhex('ec0234a357c8ad05341010a60a397d9b'), 0x708194)
    check('this checker\'s ah gives the Core specification sample (0dfbaa)', sample == 0x0DFBAA, '(%06x)' % sample)
    irk = bytes.fromhex(p['irk'])
    bad = []
    for text in p['addresses']:
        value = int(text.replace(':', ''), 16)
        prand, hash_ = value >> 24, value & 0xFFFFFF
        random_bits = prand & 0x3FFFFF
        if prand >> 22 != 0b01 or random_bits in (0, 0x3FFFFF) or ah(irk, prand) != hash_ or text == p['identity']:
            bad.append(text)
    check('every private address of the phone resolves with its IRK', not bad and len(p['addresses']) >= 3,
          '(%d addresses%s)' % (len(p['addresses']), ', not: ' + ' '.join(bad) if bad else ''))


def main():
    with open(sys.argv[1]) as f:
        observed = json.load(f)
    for b in observed['broadcasts']:
        check_broadcaster(b)
    check_phone(observed['phone'])
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
