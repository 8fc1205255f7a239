"""Differential-check adapter for the `qingping` family (service data fdcd).

Reference: Home Assistant's qingping-ble (PyPI), pinned below. Frames: every fdcd frame of
qingping-ble's test suite (tests/test_parser.py, as data), plus generated frames: edge values
(temperatures below zero, full ranges), each record kind (pressure, door states, motion and
illuminance, PM, CO2), event frames, externally powered devices.

reference() maps qingping-ble's reading to our value names (`door` is our `opening`); kinds our
names do not have (signal strength, light, VOC index, noise, door left open) are left out, and
a frame with no value left is None, as ours (nil: no reading). One deliberate difference of
qingping-ble, not of the format, is taken out: battery 0xFF means "externally powered", which
qingping-ble reports as 100 %; the frame carries no battery level, so ours has no `battery`
(SPEC §13: a quantity the frame does not carry is absent), and neither has the adapter.
"""

from __future__ import annotations

REQUIRES = ["qingping-ble==1.3.0"]

SERVICE = "0000fdcd-0000-1000-8000-00805f9b34fb"

# (source, advertised name, address, service data fdcd) from qingping-ble's tests/test_parser.py.
CAPTURED = [
    ("line 22: Qingping Motion & Light", "Qingping Motion & Light", "AA:BB:CC:DD:EE:FF", "4812cdd560342d580804000d00000f01ee"),
    ("line 35: Qingping Motion & Light", "Qingping Motion & Light", "AA:BB:CC:DD:EE:FF", "4812cdd560342d58080401e800000f017b"),
    ("line 48: Qingping Alarm Clock", "Qingping Alarm Clock", "AA:BB:CC:DD:EE:FF", "080c344d56342d5801042001b201020164"),
    ("line 62: Qingping Air Monitor Lite", "Qingping Air Monitor Lite", "AA:BB:CC:DD:EE:FF", "880ed6888fe6485401040301160212040200020013022502"),
    ("line 76: Qingping Air Monitor Lite", "Qingping Air Monitor Lite", "AA:BB:CC:DD:EE:FF", "88246b4dc994c27c0104fd00490212040900090013026102"),
    ("line 90: Qingping BT Clock Lite", "Qingping BT Clock Lite", "AA:BB:CC:DD:EE:FF", "081ef32654342d5801043601cc01020164"),
    ("line 102: Qingping Motion & Light", "Qingping Motion & Light", "AA:BB:CC:DD:EE:FF", "3058830a02cdd560342d5808"),
    ("line 116: Lee Guitars Thermo-Hygrometer", "Lee Guitars Thermo-Hygrometer", "AA:BB:CC:DD:EE:FF", "8a0fd12c63342d58010400011202020128"),
    ("line 154: Qingping Door/Window Sensor", "Qingping Door/Window Sensor", "AA:BB:CC:DD:EE:FF", "c8044d3a40342d580401010f01ef"),
    ("line 167: Qingping Temp RH M", "Qingping Temp RH M", "AA:BB:CC:DD:EE:FF", "0816a72514342d580104d800bb01020164"),
    ("line 180: Qingping Temp RH", "Qingping Temp RH", "AA:BB:CC:DD:EE:FF", "884f3e0687342d580104f100a601020164"),
    ("line 192: Qingping Temp RH Pro E", "Qingping Temp RH Pro E", "AA:BB:CC:DD:EE:FF", "0815012740342d580104de00e901020164"),
    ("line 205: Qingping Temp & RH Monitor Pro", "Qingping Temp & RH Monitor Pro", "AA:BB:CC:DD:EE:FF", "8818072240342d5801041801cd0002016107027327"),
    ("line 218: Qingping CO2 Temp RH", "Qingping CO2 Temp RH", "AA:BB:CC:DD:EE:FF", "88336f6c82342d580104ee003d0102015d13028f02"),
    ("line 232: Qingping CO2 Temp RH", "Qingping CO2 Temp RH", "58:2D:34:86:1D:93", "0a5d931d86342d5801041701ce010201641302b302"),
    ("line 315: Qingping Motion & Light", "Qingping Motion & Light", "AA:BB:CC:DD:EE:FF", "0812cdd560342d580201640f019809043c010000"),
    ("line 380: Qingping Motion & Light", "Qingping Motion & Light", "AA:BB:CC:DD:EE:FF", "4812cdd560342d580804012d01000f01b7"),
    ("line 1281: Qingping Motion & Light", "Qingping Motion & Light", "AA:BB:CC:DD:EE:FF", "4812005e60342d580804013309010f0134"),
    ("line 1311: Qingping Temp RH Baro Pro S", "Qingping Temp RH Baro Pro S", "58:2D:34:40:22:07", "8818072240342d5801041701ca0002016107027227"),
    ("line 1394: Qingping Temp RH Baro Pro S", "Qingping Temp RH Baro Pro S", "58:2D:34:40:22:07", "8818072240342d5801041801d40002016107027327"),
]


def frame_bytes(flags: int, device_type: int, address: str, records: bytes) -> bytes:
    mac = bytes.fromhex(address.replace(":", ""))[::-1]
    return bytes([flags, device_type]) + mac + records


def _rec(record_id: int, value: bytes) -> bytes:
    return bytes([record_id, len(value)]) + value


def generated():
    import struct

    a = "58:2D:34:11:22:33"
    out = []
    for t in (-40.0, -15.3, -0.1, 0.0, 45.6):
        out.append(("CGG1 temperature %s" % t, "Qingping Temp RH M", a,
                    frame_bytes(0x88, 0x16, a, _rec(0x01, struct.pack("<hH", round(t * 10), 999)) + _rec(0x02, b"\x64"))))
    out.append(("CGDK2 humidity 100 %", "", a, frame_bytes(0x88, 0x10, a, _rec(0x01, struct.pack("<hH", 201, 1000)))))
    out.append(("CGP1W pressure", "", a, frame_bytes(0x08, 0x09, a, _rec(0x01, struct.pack("<hH", -52, 801))
                                                     + _rec(0x07, struct.pack("<H", 10132)) + _rec(0x02, b"\x05"))))
    for state in (0, 1, 2):
        out.append(("CGH1 door state %d" % state, "Qingping Door/Window Sensor", a,
                    frame_bytes(0xC8, 0x04, a, _rec(0x04, bytes([state])) + _rec(0x0F, bytes([state + 10])))))
    out.append(("CGPR1 motion, illuminance uint24", "", a, frame_bytes(0x08, 0x12, a, _rec(0x08, b"\x01\x34\x12\x01"))))
    out.append(("CGPR1 event frame: motion only", "", a, frame_bytes(0x48, 0x12, a, _rec(0x08, b"\x01\x34\x12\x01"))))
    out.append(("CGPR1 no motion, dark", "", a, frame_bytes(0x08, 0x12, a, _rec(0x08, b"\x00\x00\x00\x00"))))
    # The record order of the real CGPR1 (battery, packet id, illuminance): TheengsDecoder
    # reads this frame by position, not by record, and only the low 16 bits of the 4-byte
    # illuminance (a value above 65535 lx, in sunlight, differs there: the unit tests have one).
    out.append(("CGPR1 illuminance uint32", "", a, frame_bytes(0x08, 0x12, a, _rec(0x02, b"\x32") + _rec(0x0F, b"\x07")
                                                               + _rec(0x09, struct.pack("<I", 40000)))))
    out.append(("CGDN1 PM and CO2", "", a, frame_bytes(0x88, 0x0E, a, _rec(0x12, struct.pack("<HH", 999, 1000))
                                                      + _rec(0x13, struct.pack("<H", 5000)))))
    out.append(("CGP22C externally powered", "", a, frame_bytes(0x88, 0x5D, a, _rec(0x01, struct.pack("<hH", 230, 400))
                                                               + _rec(0x02, b"\xff") + _rec(0x13, struct.pack("<H", 412)))))
    out.append(("CGG1 battery 0", "", a, frame_bytes(0x08, 0x01, a, _rec(0x02, b"\x00"))))
    out.append(("CGG1 unknown record skipped", "", a, frame_bytes(0x08, 0x01, a, _rec(0x55, b"\x01\x02\x03")
                                                                 + _rec(0x01, struct.pack("<hH", 100, 500)))))
    return out


def frames():
    out = []
    for source, name, address, data in CAPTURED:
        out.append({"address": address, "name": name or None, "service_data": {"fdcd": data}, "manufacturer_data": {},
                    "service_uuids": [], "key": None, "source": "qingping-ble tests/test_parser.py " + source})
    for source, name, address, data in generated():
        out.append({"address": address, "name": name or None, "service_data": {"fdcd": data.hex()}, "manufacturer_data": {},
                    "service_uuids": [], "key": None, "source": "generated: " + source})
    return out


SENSORS = {"temperature": "temperature", "humidity": "humidity", "battery": "battery", "pressure": "pressure",
           "illuminance": "illuminance", "pm25": "pm2_5", "pm10": "pm10", "carbon_dioxide": "co2"}
BINARY = {"door": "opening", "motion": "motion"}


def _externally_powered(data: bytes) -> bool:
    i = 8
    while i + 2 <= len(data):
        rid, size = data[i], data[i + 1]
        if rid == 0x02 and size == 1 and i + 3 <= len(data) and data[i + 2] == 0xFF:
            return True
        i += 2 + size
    return False


def reference(frame):
    from home_assistant_bluetooth import BluetoothServiceInfo
    from qingping_ble import QingpingBluetoothDeviceData

    data = frame["service_data"].get("fdcd")
    if data is None:
        return None
    raw = bytes.fromhex(data)
    info = BluetoothServiceInfo(name=frame.get("name") or "", address=frame["address"], rssi=-60,
                                manufacturer_data={}, service_data={SERVICE: raw}, service_uuids=[], source="")
    try:
        update = QingpingBluetoothDeviceData().update(info)
    except Exception:  # the reference trapping on a frame is a refusal
        return None
    values = {}
    for device_key, value in update.entity_values.items():
        name = SENSORS.get(device_key.key)
        if name:
            values[name] = value.native_value
    for device_key, value in update.binary_entity_values.items():
        name = BINARY.get(device_key.key)
        if name:
            values[name] = bool(value.native_value)
    if _externally_powered(raw):
        values.pop("battery", None)
    if not values:
        return None
    device = update.devices.get(None)
    return {"values": values, "model": device.model if device else None}


if __name__ == "__main__":
    import json

    for f in frames():
        print(json.dumps({"source": f["source"], "reference": reference(f)}))
