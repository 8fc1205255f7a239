"""Differential-check adapter for the `inkbird` family (SPEC §13), see scripts/check-decoders.

frames(): frames captured from real devices in the reference's own test suite and in Theengs Decoder's (tests/BLE/test_ble.cpp; its iBBQ frames carry no name there, they get "iBBQ"), then
frames generated here (edge values, corrupt values, ambiguous and foreign frames).
reference(frame): what the reference (inkbird-ble) reads from the frame, in our value names; None
when it publishes no value for it (it refuses the frame, or the model is outside our list:
IAM-T1/T2, IHT-2PB, INT-11x, IDT-34c-B and the nameless 18-byte model).

Manufacturer data are given as BlueZ hands them: company id -> the bytes after the id.
"""

REQUIRES = ["inkbird-ble==1.7.1"]


# Frames where we and inkbird-ble disagree and the format says we are right; reference() says
# None for them (we refuse them), each with its reason.
WE_REFUSE = {
    "inkbird-ble tests/test_parser.py:315":
        "an 'sps' frame of 8 bytes: the format has 9 (inkbird-ble reads any length when the fff0 UUID "
        "is advertised, here humidity 2.74 % and battery 6 % from shifted bytes)",
    "inkbird-ble tests/test_parser.py:1067":
        "two manufacturer-data entries (0x0001 and 0x0002): which is the newest is unknown, so we "
        "wait for the next frame; inkbird-ble drops id 0x0002 by a rule of its own, though it reads a "
        "lone 0x0002 entry as probes",
    "generated: sps, 8 bytes":
        "an 'sps' frame cut to 8 bytes (inkbird-ble reads it, with the fff0 UUID)",
}


import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bleak_frames import _md, _service_info_bleak, _uuids, _values  # noqa: E402
from driver import TheengsException  # noqa: E402

# TheengsDecoder (2.5.0) is compared on every Inkbird frame it recognises, except: the IBS-P02B's
# temperature, a signed 16-bit little-endian count of 0.1 °C (inkbird-ble and we read 37.4 °C for
# 0x0176; the newer definition in theengs/decoder, src/devices/IBS_P02B_json.h, reads 4 hex digits
# little endian too), is read by 2.5.0 from the low byte alone (11.8 °C for 0x0176): it is right
# only where the high byte is 0 (0.0 to 25.5 °C), and compared there (the generated IBS-P02B
# frames below have both).
THEENGS_EXCEPTIONS = [
    TheengsException("IBS-P02B temperature read from its low byte (high byte not 0)", {"tempc"},
                     models={"IBS-P02B"}, when=lambda frame, theirs, key: _md_bytes(frame)[5] != 0),
]


def _md_bytes(frame):
    """The bytes after the company id of the frame's first manufacturer-data entry."""
    return bytes.fromhex(next(iter(frame["manufacturer_data"].values())))


def _frame(name, md, uuids=(), source="generated"):
    return {"address": "A4:C1:38:00:00:01", "name": name, "service_data": {},
            "manufacturer_data": {f"0x{k:04x}": v for k, v in md.items()}, "service_uuids": list(uuids),
            "key": None, "source": source}


CAPTURED = [
    {"address": "AA:BB:CC:DD:EE:FF", "name": "x", "service_data": {}, "manufacturer_data": {"0x07fc": "c71200c83d5606"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:121"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "sps", "service_data": {}, "manufacturer_data": {"0x07fc": "c71200c83d5606"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:136"},
    {"address": "49:21:09:09:65:49", "name": "sps", "service_data": {}, "manufacturer_data": {"0x080f": "c0120170086406", "0x0823": "120177086406"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:297"},
    {"address": "49:21:09:09:65:49", "name": "sps", "service_data": {}, "manufacturer_data": {"0x0823": "120171086406"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:315"},
    {"address": "49:22:03:25:01:46", "name": "sps", "service_data": {}, "manufacturer_data": {"0x093b": "d01300ce906406"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:332"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "sps", "service_data": {}, "manufacturer_data": {"0x08c8": "84140088996406"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:410"},
    {"address": "49:21:09:09:65:49", "name": "tps", "service_data": {}, "manufacturer_data": {"0x0848": "000000c66e0d06"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:552"},
    {"address": "49:22:08:15:00:BB", "name": "tps", "service_data": {}, "manufacturer_data": {"0x0898": "00000007bc0008", "0x08c0": "00000026710008"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:623"},
    {"address": "49:22:08:15:00:BB", "name": "tps", "service_data": {}, "manufacturer_data": {"0x0898": "00000007bc0008"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:654"},
    {"address": "49:22:08:15:00:BB", "name": "tps", "service_data": {}, "manufacturer_data": {"0x0898": "00000007bc0008", "0x08a2": "000000dfb90008", "0x08c0": "00000026710008"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:664"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "000030e2837db5020401fa000401fa00"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:688"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "000030e2837db502cefffa000401fa00"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:776"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "xBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "00002c1100006dd3cefffa00"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:813"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "xBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "00002c1100006dd314011101"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:840"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "xBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "0000561100007f73f800ffff"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:902"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "xBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "00002c1100006dd3ffffffff"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:956"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "xBBQ", "service_data": {}, "manufacturer_data": {"0x0002": "0000561100007f739a001300"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1000"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "xBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "00002c1100006dd311011201", "0x0002": "00002c1100006dd3da03da03"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1067"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "N0BYD", "service_data": {}, "manufacturer_data": {"0xf9ab": "1b1e0048e33708"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1136"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "ITH-21-B", "service_data": {}, "manufacturer_data": {"0x2449": "07110098d80013026401900400000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1209"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "ITH-13-B", "service_data": {}, "manufacturer_data": {"0x2449": "1223052f0e0110026400000000000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1287"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "ITH-13-B", "service_data": {}, "manufacturer_data": {"0x2449": "1223052ff000f9016400000400000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1360"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "ITH-11-B", "service_data": {}, "manufacturer_data": {"0x2449": "0812005e00005d036400640800000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1436"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "ITH-11-B", "service_data": {}, "manufacturer_data": {"0x2449": "0812005efeff48036400640800000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1511"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "ITH-11-B", "service_data": {}, "manufacturer_data": {"0x2449": "0812005e0000ffff6400640800000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1588"},
    {"address": "62:00:A1:3C:AE:7B", "name": "Ink@IAM-T1", "service_data": {}, "manufacturer_data": {"0x3154": "41432d363230306131336361650000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:1996"},
    {"address": "49:24:11:18:00:65", "name": "IBS-P02B", "service_data": {}, "manufacturer_data": {"0x2449": "11180065760100005f00000100000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:2961"},
    {"address": "49:24:11:18:00:65", "name": "IBS-P02B", "service_data": {}, "manufacturer_data": {"0x2449": "11180065760100006000000100000000"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:2991"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "sps", "service_data": {}, "manufacturer_data": {"0x0830": "0f12005ac75706"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:3683"},
    {"address": "62:00:A1:35:9C:4B", "name": "Ink@IHT-2PB#c4b", "service_data": {}, "manufacturer_data": {"0x4849": "325042363230306131333539633462"}, "service_uuids": [], "key": None, "source": "inkbird-ble tests/test_parser.py:3724"},
    {"address": "90:7B:C6:0A:06:28", "name": "INT-11P-B", "service_data": {}, "manufacturer_data": {"0x0628": "0ac67b90"}, "service_uuids": ["0000fff0-0000-1000-8000-00805f9b34fb"], "key": None, "source": "inkbird-ble tests/test_parser.py:4024"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "sps", "service_data": {}, "manufacturer_data": {"0x0a66": "03150010805908"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:521 (Inkbird TH1)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "sps", "service_data": {}, "manufacturer_data": {"0x09f0": "fe1301ca893008"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:522 (Inkbird TH1)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "tps", "service_data": {}, "manufacturer_data": {"0x0a66": "19200010805908"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:533 (Inkbird TH2)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "tps", "service_data": {}, "manufacturer_data": {"0xfb76": "00000010805908"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:534 (Inkbird TH2)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "sps", "service_data": {}, "manufacturer_data": {"0x00e3": "bb070093c36406"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:535 (Inkbird TH2)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "tps", "service_data": {}, "manufacturer_data": {"0x0a84": "ffff00a6066008"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:536 (Inkbird P01B)"},
    {"address": "A1:B2:C3:D4:E5:F6", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000a1b2c3d4e5f6e600e600"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1384 (IBT-2XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeeff18014001"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1385 (IBT-2XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeefff6ff8a02"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1386 (IBT-2XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeeffdc00d200"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1387 (IBT-2XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeefff6ff4402"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1388 (IBT-2XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "0000ffeeddccbbaadc00cf00"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1389 (IBT-2X)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "0000ffeeddccbbaa4c014f01"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1390 (IBT-2X)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0001": "0000ffeeddccbbaaffff4f01"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1391 (IBT-2X)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeeff04010401fa00fa00"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1392 (IBT-4XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeeff0401f6ff58021202"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1393 (IBT-4XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeeffd200c800f6ffd200f6fff6ff"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1394 (IBT-6XS)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "iBBQ", "service_data": {}, "manufacturer_data": {"0x0000": "0000aabbccddeeffc800c800f6ffd200f6fff6ff"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:1395 (SOLIS_6)"},
]


def frames():
    out = list(CAPTURED)
    fff0 = ["0000fff0-0000-1000-8000-00805f9b34fb"]
    for t100, h100, battery in [(-4000, 0, 100), (-1, 10000, 0), (6000, 10001, 50), (2044, 4807, 101), (-32768, 65535, 1),
                                (32767, 1, 99), (-1162, 0, 89)]:
        rest = h100.to_bytes(2, "little").hex() + "0000" + "00" + f"{battery:02x}" + "08"
        out.append(_frame("sps", {t100 & 0xFFFF: rest}, fff0))
        out.append(_frame("tps", {t100 & 0xFFFF: rest}, fff0))
        out.append(_frame(None, {t100 & 0xFFFF: rest}, fff0))
    for t10, h10, battery in [(-400, 0, 100), (-2, 840, 100), (1000, 1000, 5), (1000, 1001, 5), (216, 531, 101)]:
        rest = "0812005e" + (t10 & 0xFFFF).to_bytes(2, "little").hex() + h10.to_bytes(2, "little").hex() + f"{battery:02x}" + "00640800000000"
        out.append(_frame("ITH-11-B", {0x2449: rest}, fff0))
    for t10, battery in [(216, 80), (5, 100), (255, 42), (256, 99), (-50, 7), (374, 95)]:
        rest = "11180065" + (t10 & 0xFFFF).to_bytes(2, "little").hex() + "0000" + f"{battery:02x}" + "00000100000000"
        out.append(_frame("IBS-P02B", {0x2449: rest}, fff0))
    for probes in ([260, -50, 0xFFFF, 3000], [0xFFFF, 0xFFFF], [-32768, 32767, 1, -1, 0xFFFF, 0], [225]):
        body = "".join((p & 0xFFFF).to_bytes(2, "little").hex() for p in probes)
        out.append(_frame("iBBQ", {0x0000: "0000aabbccddeeff" + body}, fff0))
        out.append(_frame("xBBQ", {0x0001: "00002c1100006dd3" + body}, fff0))
    out += [
        _frame("sps", {0x07FC: "c71200c83d56"}, fff0, source="generated: sps, 8 bytes"), _frame("iBBQ", {0x0000: "0000aabbccddeeff1801"}),
    ]
    return out


_SCOPE = {"IBS-TH", "IBS-TH2/P01B", "ITH-11-B", "ITH-13-B", "ITH-21-B", "IBS-P02B"}


def reference(frame):
    if frame.get("source") in WE_REFUSE:
        return None
    from inkbird_ble.parser import INKBIRDBluetoothDeviceData

    update = INKBIRDBluetoothDeviceData().update(_service_info_bleak(frame))
    device = update.devices.get(None)
    model = device.model if device else None
    if model not in _SCOPE and not (model and model[1:].startswith("BBQ-")):
        return None  # IAM-T1/T2, IHT-2PB, INT-11x, IDT-34c-B, the generic 18-byte model: not in our list
    values = _values(update)
    if not values and model[1:].startswith("BBQ-"):
        # Every probe unplugged: inkbird-ble publishes nothing, ours the device with no values
        # (the frame is valid; a probe that is not plugged in is absent, SPEC §13).
        return {"values": {}, "model": model}
    return {"values": values, "model": model} if values else None
