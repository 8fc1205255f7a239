"""Adapter for Mopeka tank sensors (manufacturer data 0x0059 with service UUID fee5 advertised),
reference: mopeka-iot-ble (the driver's interface: see driver.py), with its default medium,
propane (SPEC §13: tank_level in mm of propane).

Frames: every frame of mopeka-iot-ble's tests/test_parser.py (Pro Plus, Pro Check, Pro Check
Universal, Lippert BottleCheck, Pro-200B, TD40: each reading quality), theengs/decoder's
tests/BLE/test_ble.cpp Mopeka frames, then generated ones: every hardware id, the extremes of
battery, temperature and level, each quality; and the same bytes without fee5 (not Mopeka's:
both refuse).

reference(): MopekaIOTBluetoothDeviceData().update() on the frame, mapped to our names:
temperature, battery, battery_voltage -> voltage, tank_level (absent when the reference gives
None: reading quality 0). The model is the name of the reference's DEVICE_TYPES entry for the
hardware id (its device type is a part number, M1017, shared by several models).
TOLERANCE: battery, which the reference rounds to one decimal and we do not (TheengsDecoder,
also compared, does not either): at most 0.05 apart.
"""
import random

REQUIRES = ["mopeka-iot-ble==1.0.0"]
TOLERANCE = {"battery": 0.0501}

FEE5 = "0000fee5-0000-1000-8000-00805f9b34fb"

_REAL = [
    ("0872460030e0f509f0d8", "C9:F3:32:E0:F5:09", "PRO_SERVICE_BAD_QUALITY_INFO"),
    ("0872460040e0f509f0d8", "C9:F3:32:E0:F5:09", "PRO_SERVICE_LOW_QUALITY_INFO"),
    ("08724600c0e0f509f0d8", "C9:F3:32:E0:F5:09", "PRO_SERVICE_GOOD_QUALITY_INFO"),
    ("087043b6c3e0f509fae3", "C9:F3:32:E0:F5:09", "PRO_INSTALLED_SERVICE_INFO"),
    ("067043b6c3e0f509fae3", "C9:F3:32:E0:F5:09", "LIPPERT_SERVICE_INFO"),
    ("037043b6c3e0f509fae3", "C9:F3:32:E0:F5:09", "CHECK_INSTALLED_SERVICE_INFO"),
    ("0c7043b6c3e0f509fae3", "C9:F3:32:E0:F5:09", "CHECK_UNIVERSAL_INSTALLED_SERVICE_INFO"),
    ("125f3178c7cce52ba83f", "CB:A1:6C:CC:E5:2B", "PRO_200B_SERVICE_INFO"),
    ("0a73404e4d6a75107f80", "DA:D8:AC:6A:75:10", "TDR40_AIR_BAD_QUALITY_INFO"),
    ("0c60383c832aea8c31f8", "DA:D8:AC:6A:75:10", "TDR40_AIR_LOW_QUALITY_INFO"),
    ("0a71407dd06a75108020", "DA:D8:AC:6A:75:10", "TDR40_AIR_GOOD_QUALITY_INFO"),
]
_THEENGS = ["035d41a4c150a8cc0323", "035b41a4c650a8cc801b", "065d3b00001b4443109b", "0c60410000a73e762c80",
            "0c603de1c8f2eb44ee1f"]
_IDS = [0x03, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x12]


def _frame(address, data, source, fee5=True):
    return {"address": address, "name": None, "service_data": {}, "manufacturer_data": {"0x0059": data},
            "service_uuids": ["fee5"] if fee5 else [], "key": None, "source": source}


def frames():
    out = [_frame(address, data, f"mopeka-iot-ble tests/test_parser.py {name}") for data, address, name in _REAL]
    out += [_frame(f"A4:C1:50:A8:CC:{n:02X}", data, "theengs/decoder tests/BLE/test_ble.cpp Mopeka")
            for n, data in enumerate(_THEENGS)]
    rng = random.Random(89)
    edges = [(0, 0, 0, 0), (255, 127, 0x3FFF, 3), (70, 40, 1, 1), (96, 0, 0x3FFF, 2), (83, 127, 500, 3),
             (200, 60, 8000, 0)]
    for n in range(26):
        battery, temperature, level, quality = edges[n] if n < len(edges) else (
            rng.randint(60, 110), rng.randint(0, 127), rng.randint(0, 0x3FFF), rng.randint(0, 3))
        button = 0x80 if n % 5 == 0 else 0
        data = bytes([_IDS[n % len(_IDS)], battery, button | temperature, level & 0xFF, (quality << 6) | (level >> 8),
                      0xA8, 0xCC, n, rng.getrandbits(8), rng.getrandbits(8)])
        out.append(_frame(f"E0:F5:09:00:00:{n:02X}", data.hex(), f"generated id 0x{data[0]:02x} quality {quality}"))
    for n in range(3):  # the same bytes without fee5: not a Mopeka frame
        out.append(_frame(f"E0:F5:09:00:01:{n:02X}", _REAL[n][0], "no fee5: not Mopeka", fee5=False))
    return out


_NAMES = {"temperature": "temperature", "battery": "battery", "battery_voltage": "voltage", "tank_level": "tank_level"}


def reference(frame):
    from bluetooth_sensor_state_data import BluetoothServiceInfo
    from mopeka_iot_ble.parser import DEVICE_TYPES, MopekaIOTBluetoothDeviceData

    data = bytes.fromhex((frame.get("manufacturer_data") or {}).get("0x0059", ""))
    uuids = [FEE5 if u == "fee5" else u for u in frame.get("service_uuids") or []]
    info = BluetoothServiceInfo(name=frame.get("name") or "", address=frame["address"], rssi=-60,
                                manufacturer_data={0x0059: data}, service_uuids=uuids, service_data={},
                                source="local")
    try:
        update = MopekaIOTBluetoothDeviceData().update(info)
    except Exception:
        return None
    values = {}
    for key, entity in update.entity_values.items():
        if key.key in _NAMES and entity.native_value is not None:
            values[_NAMES[key.key]] = entity.native_value
    if not values:
        return None
    return {"values": values, "model": DEVICE_TYPES[data[0]].name}
