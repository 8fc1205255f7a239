"""Adapter for SwitchBot's sensors (service data fd3d / 0d00, manufacturer data 0x0969), reference:
PySwitchbot (the driver's interface: see driver.py).

Frames: every Meter / Meter Plus / Outdoor Meter / Contact / Motion frame of PySwitchbot's
tests/test_adv_parser.py (service data with the device type, with and without the newer
firmware's manufacturer data) and of theengs/decoder's tests/BLE/test_ble.cpp, then generated ones: each model, both service UUIDs, negative
and edge temperatures, humidity 0 / 100, battery 0 / 100, each contact and motion bit.

reference(): PySwitchbot's parse_advertisement_data on the frame (no model cache), mapped to our
names: temperature, humidity, battery; contact_open -> opening, motion_detected -> motion,
is_light -> light. The reference's reading of device types this family does not cover (a bit
flip can turn a Meter into a Bot) and its empty readings (no reading yet, too short) count as
refusals. Model: PySwitchbot's modelName mapped to ours (IO_METER is the Outdoor Meter).
"""
import os
import random
import sys

REQUIRES = ["PySwitchbot==3.1.0"]

_REAL = [
    ({"fd3d": "64406405007500f812"}, {"0x0969": "e7ab46ac8f927c0f001104"}, "test_parse_advertisement_data_contact"),
    ({"fd3d": "6400da040046018fc4"}, {"0x0969": "cb39cdc43d46412c0046018fc4"}, "test_contact_sensor_mfr"),
    ({"fd3d": "6400da040046018fc4"}, {}, "test_contact_sensor_srv"),
    ({"fd3d": "6440da020017005144"}, {"0x0969": "cb39cdc43d46849c0017005144"}, "test_contact_sensor_open"),
    ({"fd3d": "6440da00002b001984"}, {"0x0969": "cb39cdc43d46898c002b001984"}, "test_contact_sensor_closed"),
    ({"fd3d": "5400e4069835"}, {"0x0969": "d7c17d5deb43de03069835"}, "test_wosensor_passive_and_active"),
    ({"fd3d": "5400e4069835"}, {}, "test_wosensor_active"),
    ({"fd3d": "540000000000"}, {}, "test_wosensor_active_zero_data"),
    ({"fd3d": "7700e4"}, {"0x0969": "aabbccddeeffe00f06983500"}, "test_woiosensor_passive_and_active"),
    ({"fd3d": "7300e2006601"}, {"0x0969": "c0219ae8bc496a1c0066"}, "test_motion_sensor_clear"),
    ({"fd3d": "7340e2003801"}, {"0x0969": "c0219ae8bc49695c0038"}, "test_motion_sensor_motion"),
    ({"fd3d": "7300e2046702"}, {"0x0969": "c0219ae8bc49732c0467"}, "test_motion_sensor_is_light_passive"),
    ({"fd3d": "7300e2046702"}, {}, "test_motion_sensor_is_light_active"),
    ({"fd3d": "7340e2002c02"}, {"0x0969": "c0219ae8bc49766c002c"}, "test_motion_with_light_detected"),
]

# Frames of theengs/decoder's tests/BLE/test_ble.cpp (service data, and manufacturer data where
# it pairs them), checked against PySwitchbot like the others.
_THEENGS = [
    ({"fd3d": "770064"}, {"0x0969": "aabbccddeeff8b0305993200"}, "theengs/decoder tests/BLE/test_ble.cpp Outdoor Meter"),
    ({"fd3d": "7700e4"}, {"0x0969": "aabbccddeeff940b039a5000"}, "theengs/decoder tests/BLE/test_ble.cpp Outdoor Meter"),
    ({"fd3d": "770041"}, {"0x0969": "aabbccddeeffe30f090f2a00"}, "theengs/decoder tests/BLE/test_ble.cpp Outdoor Meter"),
    ({"fd3d": "6900ba18993b"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Meter Plus"),
    ({"fd3d": "6900ba031938"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Meter Plus"),
    ({"fd3d": "6900ba379ab8"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Meter Plus"),
    ({"0d00": "540054459938"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Meter"),
    ({"0d00": "5400d40299b8"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Meter"),
    ({"0d00": "73b037000045"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Motion Sensor"),
    ({"fd3d": "7340d50000f2"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Motion Sensor"),
    ({"fd3d": "73006402f002"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Motion Sensor"),
    ({"0d00": "64c05c010000000000"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Contact Sensor"),
    ({"0d00": "6480d7020000000000"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Contact Sensor"),
    ({"fd3d": "6440c1050000000000"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Contact Sensor"),
    ({"fd3d": "640064440359ffff42"}, {}, "theengs/decoder tests/BLE/test_ble.cpp Contact Sensor"),
]

_MODELS = {"WoSensorTH": "Meter", "WoMeterPlus": "Meter Plus", "WoIOSensorTH": "Outdoor Meter",
           "WoContact": "Contact Sensor", "WoPresence": "Motion Sensor"}


def _frame(address, service_data, manufacturer_data, source):
    return {"address": address, "name": None, "service_data": service_data, "manufacturer_data": manufacturer_data,
            "service_uuids": [], "key": None, "source": source}


def _th(temperature_tenths, humidity, fahrenheit=False):
    """The three temperature/humidity bytes."""
    magnitude = abs(temperature_tenths)
    return bytes([magnitude % 10, (0x80 if temperature_tenths >= 0 else 0) | (magnitude // 10),
                  (0x80 if fahrenheit else 0) | humidity])


def frames():
    out = []
    for n, (service_data, manufacturer_data, test) in enumerate(_REAL):
        out.append(_frame(f"C0:21:9A:E8:BC:{n:02X}", service_data, manufacturer_data,
                          f"PySwitchbot tests/test_adv_parser.py::{test}"))
    for n, (service_data, manufacturer_data, source) in enumerate(_THEENGS):
        out.append(_frame(f"AA:BB:CC:DD:EE:{n:02X}", service_data, manufacturer_data, source))
    rng = random.Random(969)
    mac = bytes.fromhex("e1ab46ac8f00")
    edges = [(-400, 0, 0), (-1, 1, 100), (5, 100, 55), (999, 37, 3), (-95, 80, 100), (0, 1, 50), (1270, 100, 100)]
    for n in range(24):
        kind = "TiwTiw"[n % 6]
        temperature, humidity, battery = edges[n] if n < len(edges) else (
            rng.randint(-300, 600), rng.randint(0, 100), rng.randint(0, 100))
        th = _th(temperature, humidity, fahrenheit=n % 5 == 0)
        uuid = "0d00" if n % 4 == 3 else "fd3d"
        if kind == "w":  # the Outdoor Meter: 3 bytes of service data, readings in manufacturer data
            sd = bytes([ord("w"), 0, battery])
            md = mac[:5] + bytes([n]) + bytes([rng.getrandbits(8), rng.getrandbits(8)]) + th + b"\x00"
        else:
            sd = bytes([ord(kind) | (0x80 if n % 7 == 0 else 0), 0, battery]) + th
            md = (mac[:5] + bytes([n, rng.getrandbits(8), rng.getrandbits(8)]) + th) if n % 2 else b""
        out.append(_frame(f"E1:AB:46:AC:8F:{n:02X}", {uuid: sd.hex()}, {"0x0969": md.hex()} if md else {},
                          f"generated {kind} {temperature / 10} C {humidity} % battery {battery}"))
    for n in range(16):
        battery = rng.randint(0, 100)
        if n % 2 == 0:  # Contact Sensor
            sd = bytes([ord("d"), rng.getrandbits(8) & 0xC0, battery, rng.getrandbits(3), 0, rng.getrandbits(8), 0,
                        rng.getrandbits(8), rng.getrandbits(8)])
            # The newer firmware's byte 7 says what the service data says (as a real sensor's do).
            flags = (0x80 if sd[1] & 0x40 else 0) | (0x40 if sd[3] & 1 else 0) | (sd[3] & 0x06) << 3
            md = mac[:6] + bytes([rng.getrandbits(8), flags]) + bytes(rng.getrandbits(8) for _ in range(5))
        else:  # Motion Sensor
            sd = bytes([ord("s"), rng.getrandbits(8) & 0xC0, battery, 0, rng.getrandbits(8), rng.getrandbits(6)])
            flags = (0x40 if sd[1] & 0x40 else 0) | (0x20 if sd[5] & 0x02 else 0)
            md = mac[:6] + bytes([rng.getrandbits(8), flags, 0, rng.getrandbits(8)])
        out.append(_frame(f"E1:AB:46:AC:90:{n:02X}", {"fd3d": sd.hex()}, {"0x0969": md.hex()} if n % 4 < 2 else {},
                          f"generated {'contact' if n % 2 == 0 else 'motion'} sensor"))
    return out


def _parser():
    """PySwitchbot's adv_parser: imported with this directory off sys.path, where this very
    file (switchbot.py) would shadow the package."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        import switchbot.adv_parser as parser
    finally:
        sys.path[:] = saved
    return parser


def reference(frame):
    from bleak.backends.device import BLEDevice
    from bleak.backends.scanner import AdvertisementData

    parser = _parser()
    _MODEL_TO_MAC_CACHE, parse_advertisement_data = parser._MODEL_TO_MAC_CACHE, parser.parse_advertisement_data

    _MODEL_TO_MAC_CACHE.clear()
    service_data = {f"0000{uuid}-0000-1000-8000-00805f9b34fb": bytes.fromhex(data)
                    for uuid, data in (frame.get("service_data") or {}).items()}
    manufacturer_data = {int(company, 16): bytes.fromhex(data)
                         for company, data in (frame.get("manufacturer_data") or {}).items()}
    device = BLEDevice(frame["address"], None, None)
    advertisement = AdvertisementData(local_name=None, manufacturer_data=manufacturer_data, service_data=service_data,
                                      service_uuids=[], tx_power=-127, rssi=-60, platform_data=())
    parsed = parse_advertisement_data(device, advertisement)
    if parsed is None:
        return None
    model = _MODELS.get(str(parsed.data.get("modelName", "")))
    data = parsed.data.get("data") or {}
    if model is None or not data:
        return None
    values = {}
    if "temperature" in data:
        values["temperature"] = data["temperature"]
        values["humidity"] = data["humidity"]
    elif model == "Contact Sensor":
        values["opening"] = data["contact_open"]
        values["motion"] = data["motion_detected"]
        values["light"] = data["is_light"]
    else:
        if data.get("motion_detected") is None:
            return None
        values["motion"] = data["motion_detected"]
        values["light"] = data["is_light"]
    if data.get("battery") is not None:
        values["battery"] = data["battery"]
    return {"values": values, "model": model}
