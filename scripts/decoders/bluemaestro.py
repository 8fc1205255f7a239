"""Adapter for BlueMaestro Tempo Disc (manufacturer data 0x0133), reference: bluemaestro-ble (the
driver's interface: see driver.py).

Frames: bluemaestro-ble's tests/test_parser.py frame (a Tempo Disc THD), theengs/decoder's
tests/BLE/test_ble.cpp TempoDisc 1in1 / 3in1 / 4in1 frames, then generated ones for every
version byte bluemaestro-ble knows (T, THD legacy and current, THPD, the Maxi T / THD / THPD,
the v8 temperature sensor): random readings, negative temperatures, humidity 0 and 100 %,
battery 0 and 100 %, trailing statistics bytes or none.

reference(): BlueMaestroBluetoothDeviceData.update() on the frame, mapped to our names
(temperature, humidity, battery, dew_point; pressure from mbar = hPa); the model is the
reference's device type.

Erratum (noted in the report): the Maxi THD / THPD do not carry a dew point; bluemaestro-ble
computes one (Magnus formula). SPEC §13: a quantity the frame does not carry is absent, so it is
dropped here for those two versions (0x2a, 0x2b), as ours never publishes it.
"""
import random
import struct

REQUIRES = ["bluemaestro-ble==1.2.0"]

_REAL = [
    ("17640e10000200f201f20083010001" "0d02ab00f201f2010d02ab00f201f200ff024e0000000000",
     "bluemaestro-ble tests/test_parser.py::test_temp_disc_thd"),
    ("17560e10177000ef01b3006c0100", "theengs/decoder tests/BLE/test_ble.cpp TempoDisc 3in1"),
    ("16430e10061eff5d030fff400100", "theengs/decoder tests/BLE/test_ble.cpp TempoDisc 3in1"),
    ("1b3a0e10061e00df02f727970100", "theengs/decoder tests/BLE/test_ble.cpp TempoDisc 4in1"),
    ("0d6402580ad100fc0100", "theengs/decoder tests/BLE/test_ble.cpp TempoDisc 1in1"),
]


def _frame(address, data, source):
    return {"address": address, "name": None, "service_data": {}, "manufacturer_data": {"0x0133": data},
            "service_uuids": [], "key": None, "source": source}


def frames():
    out = [_frame(f"D7:9B:8F:00:00:{n:02X}", data, source) for n, (data, source) in enumerate(_REAL)]
    rng = random.Random(307)
    versions = [0x0D, 0x17, 0x1B, 0x16, 0x29, 0x2A, 0x2B, 0x08]
    for n in range(32):
        version = versions[n % len(versions)]
        battery = [0, 100][n % 2] if n < 8 else rng.randint(0, 100)
        temperature = rng.randint(-400, 850) if n >= 8 else [-400, 850, -1, 0, -123, 7, 300, -250][n]
        humidity = [0, 1000][n % 2] if n < 8 else rng.randint(0, 1000)
        tail = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 0, 2, 5])))
        if version in (0x08, 0x0D):
            data = struct.pack(">BBHHh", version, battery, 3600, rng.randint(0, 65535), temperature)
        elif version in (0x16, 0x17):
            data = struct.pack(">BBHHhHh", version, battery, 3600, rng.randint(0, 65535), temperature, humidity,
                               temperature - rng.randint(0, 200))
        elif version == 0x1B:
            data = struct.pack(">BBHHhHH", version, battery, 3600, rng.randint(0, 65535), temperature, humidity,
                               rng.randint(8700, 10850))
        else:
            head = struct.pack("<BB", version, battery) + bytes(rng.getrandbits(8) for _ in range(13))
            data = head + struct.pack("<h", temperature * 10)
            if version >= 0x2A:
                data += struct.pack("<h", humidity * 10)
            if version == 0x2B:
                data += struct.pack("<i", rng.randint(87000, 108500))
        out.append(_frame(f"D7:9B:8F:00:01:{n:02X}", (data + tail).hex(), f"generated version 0x{version:02x}"))
    return out


_NAMES = {"temperature": "temperature", "humidity": "humidity", "battery": "battery", "dew_point": "dew_point",
          "pressure": "pressure"}


def reference(frame):
    from bleak.backends.device import BLEDevice
    from bluemaestro_ble import BlueMaestroBluetoothDeviceData
    from habluetooth import BluetoothServiceInfoBleak

    data = bytes.fromhex((frame.get("manufacturer_data") or {}).get("0x0133", ""))
    info = BluetoothServiceInfoBleak(
        name=frame.get("name") or "", manufacturer_data={0x0133: data}, service_uuids=[], address=frame["address"],
        rssi=-60, service_data={}, source="local", device=BLEDevice(name="", address=frame["address"], details={}),
        time=0.0, advertisement=None, connectable=True, tx_power=0, raw=None)
    try:
        update = BlueMaestroBluetoothDeviceData().update(info)
    except Exception:
        return None
    values = {}
    for key, entity in update.entity_values.items():
        if key.key in _NAMES and entity.native_value is not None:
            values[_NAMES[key.key]] = entity.native_value
    if not values:
        return None
    if data[:1] in (b"\x2a", b"\x2b"):
        values.pop("dew_point", None)  # erratum: computed, not carried
    device = update.devices.get(None)
    return {"values": values, "model": device.model if device else None, "manufacturer": "BlueMaestro"}
