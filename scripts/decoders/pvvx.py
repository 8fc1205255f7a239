"""Adapter for the pvvx / ATC1441 custom-firmware formats (service data 181a), reference:
TheengsDecoder (the driver's interface: see driver.py). Frames are generated (fixed seed):
random readings and the edges of each field, with the Xiaomi OUI the firmware devices carry.
"""
import json
import random
import struct

REQUIRES = ["TheengsDecoder==2.5.0"]
DECODER = ["pvvx", "atc1441"]
THEENGS = False  # TheengsDecoder is the reference itself


def _frame(address, data, source):
    return {"address": address.hex(":").upper(), "name": None, "service_data": {"181a": data.hex()},
            "manufacturer_data": {}, "service_uuids": [], "key": None, "source": source}


def frames():
    rng = random.Random(181)
    out = []
    edges = [(-4000, 0, 2000, 0), (6000, 10000, 3300, 100), (0, 5000, 3000, 50), (-1, 1, 2500, 1)]
    for n in range(24):
        address = bytes([0xA4, 0xC1, 0x38]) + bytes(rng.getrandbits(8) for _ in range(3))
        if n < len(edges):
            temperature, humidity, millivolts, battery = edges[n]
        else:
            temperature, humidity = rng.randint(-4000, 6000), rng.randint(0, 10000)
            millivolts, battery = rng.randint(2000, 3300), rng.randint(0, 100)
        counter = rng.getrandbits(8)
        if n % 2 == 0:
            data = address[::-1] + struct.pack("<hHHBBB", temperature, humidity, millivolts, battery, counter, rng.getrandbits(8))
            out.append(_frame(address, data, "generated pvvx"))
        else:
            data = address + struct.pack(">hBBHB", temperature // 10, humidity // 100, battery, millivolts, counter)
            out.append(_frame(address, data, "generated atc1441"))
    return out


_KEYS = (("tempc", "temperature"), ("hum", "humidity"), ("batt", "battery"), ("volt", "voltage"))


# TheengsDecoder claims these frames only when the MAC in them starts with Xiaomi's OUI A4:C1:38
# (its heuristic; the firmware lets the MAC be changed, and neither format checks it, nor do we):
# the reference is asked with the MAC bytes replaced by one with that OUI, so that it judges the
# format (length, values), not the address.
_MAC = bytes.fromhex("a4c138000001")


def reference(frame):
    import TheengsDecoder
    data = frame["service_data"].get("181a")
    if data is None:
        return None
    raw = bytes.fromhex(data)
    if len(raw) == 15:
        raw = _MAC[::-1] + raw[6:]
    elif len(raw) == 13:
        raw = _MAC + raw[6:]
    text = TheengsDecoder.decodeBLE(json.dumps({"id": "A4:C1:38:00:00:01", "servicedata": raw.hex(), "servicedatauuid": "0x181a"}))
    if not text:
        return None
    theirs = json.loads(text)
    if not str(theirs.get("model_id", "")).endswith(("_PVVX", "_ATC")):
        return None
    values = {ours: theirs[key] for key, ours in _KEYS if key in theirs}
    return {"values": values, "model": None}
