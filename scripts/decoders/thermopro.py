"""Differential-check adapter for the `thermopro` family (SPEC §13), see scripts/check-decoders.

frames(): frames captured from real devices in the reference's own test suite and in Theengs Decoder's (tests/BLE/test_ble.cpp), then
frames generated here (edge values, corrupt values, ambiguous and foreign frames).
reference(frame): what the reference (thermopro-ble) reads from the frame, in our value names; None
when it publishes no value for it (it refuses the frame, or the model is outside our list:
the TP96x/TP97x meat thermometers).

Manufacturer data are given as BlueZ hands them: company id -> the bytes after the id.
"""

REQUIRES = ["thermopro-ble==1.1.4"]


import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bleak_frames import _md, _service_info_bleak, _uuids, _values  # noqa: E402


def _frame(name, md, uuids=(), source="generated"):
    return {"address": "A4:C1:38:00:00:01", "name": name, "service_data": {},
            "manufacturer_data": {f"0x{k:04x}": v for k, v in md.items()}, "service_uuids": list(uuids),
            "key": None, "source": source}


CAPTURED = [
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357 (2142)", "service_data": {}, "manufacturer_data": {"0xf1c2": "001d022c"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:56"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357 (2142)", "service_data": {}, "manufacturer_data": {"0xf182": "001d022c"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:67"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357 (2142)", "service_data": {}, "manufacturer_data": {"0xf9c2": "0010022c"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:78"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357S (2142)", "service_data": {}, "manufacturer_data": {"0xeec2": "0029220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:88"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357S (2142)", "service_data": {}, "manufacturer_data": {"0xeec2": "0029220b01", "0xedc2": "0029220b01", "0xecc2": "0029220b01", "0xebc2": "0028220b01", "0xeac2": "0028220b01", "0xe9c2": "0029220b01", "0xe8c2": "0028220b01", "0xe7c2": "0028220b01", "0xe6c2": "0028220b01", "0xe5c2": "0028220b01", "0xe4c2": "0027220b01", "0xe3c2": "0028220b01", "0xe2c2": "0028220b01", "0xe1c2": "0029220b01", "0xe0c2": "0029220b01", "0xdfc2": "0029220b01", "0xdec2": "0029220b01", "0xddc2": "0029220b01", "0xdcc2": "0029220b01", "0xdbc2": "0029220b01", "0xdac2": "0029220b01", "0xd9c2": "002a220b01", "0xd8c2": "0029220b01", "0xd7c2": "002a220b01", "0xd6c2": "002a220b01", "0xd5c2": "002a220b01", "0xd4c2": "002b220b01", "0xd3c2": "002d220b01", "0xd2c2": "002c220b01", "0xd1c2": "002f220b01", "0xd0c2": "0031220b01", "0xcfc2": "002e220b01", "0xcec2": "002c220b01", "0xcdc2": "002c220b01", "0xccc2": "002b220b01", "0xcbc2": "002a220b01", "0xcac2": "002a220b01", "0xc9c2": "002a220b01", "0xc8c2": "002a220b01", "0xc7c2": "002a220b01", "0xc6c2": "0029220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:101"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357S (3C62)", "service_data": {}, "manufacturer_data": {"0xd1c2": "0033220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:154"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357S (3C62)", "service_data": {}, "manufacturer_data": {"0xffc2": "ffff220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:166"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357S (3C62)", "service_data": {}, "manufacturer_data": {"0xd0c2": "0034220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:178"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP393 (9376)", "service_data": {}, "manufacturer_data": {"0xf2c2": "0035022c"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:191"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP358 (2142)", "service_data": {}, "manufacturer_data": {"0xf1c2": "001d022c"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:203"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP358S (2142)", "service_data": {}, "manufacturer_data": {"0xf1c2": "001d022c"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:213"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP393 (9376)", "service_data": {}, "manufacturer_data": {"0x00c2": "0000002c", "0xf2c2": "0028022c", "0xf1c2": "0028022c", "0xf0c2": "0028022c", "0xefc2": "0028022c", "0xeec2": "0028022c", "0xedc2": "0028022c", "0xecc2": "0028022c", "0xebc2": "0029022c", "0xeac2": "0029022c", "0xe9c2": "0029022c", "0xe8c2": "0029022c", "0xe7c2": "002a022c", "0xe6c2": "002a022c", "0xe5c2": "002a022c", "0xe4c2": "002a022c"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:224"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP960R (0000)", "service_data": {}, "manufacturer_data": {"0x3a00": "0030083800"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:278"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP960R (0000)", "service_data": {}, "manufacturer_data": {"0x3a00": "0030083800", "0x3800": "0022083800", "0x3900": "0022083900"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:287"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP962R (0000)", "service_data": {}, "manufacturer_data": {"0x3701": "003b0b3700"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:301"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP962R (0000)", "service_data": {}, "manufacturer_data": {"0x4300": "00170a4300", "0x3701": "003b0b3700"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:310"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP970R", "service_data": {}, "manufacturer_data": {"0x3500": "00460b3500"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:320"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP970R", "service_data": {}, "manufacturer_data": {"0x3400": "00ae0b3400"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:329"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0x7200": "006a0a33d3b8420040ae426606ae426c54737744f8"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:339"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0x8d00": "00a60acdecff429a6900439a6900436c54737744f8"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:348"},
    {"address": "C3:18:C9:9C:C8:90", "name": "TP357S (C890)", "service_data": {}, "manufacturer_data": {"0xc7c2": "0014220b01", "0xc6c2": "0014220b01", "0xc8c2": "0014220b01", "0xc9c2": "0014220b01", "0xc5c2": "0014220b01", "0xc4c2": "0014220b01", "0xcac2": "0014220b01", "0xc3c2": "0014220b01", "0xcbc2": "0014220b01", "0xccc2": "0014220b01", "0xcdc2": "0014220b01", "0xc2c2": "0014220b01", "0xcec2": "0014220b01", "0xd0c2": "0019220b01", "0xd1c2": "0014220b01", "0xd2c2": "0014220b01", "0xd3c2": "0014220b01", "0xd4c2": "0014220b01", "0xd5c2": "0014220b01", "0xd6c2": "0014220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:358"},
    {"address": "C3:18:C9:9C:C8:90", "name": "TP357S (C890)", "service_data": {}, "manufacturer_data": {"0xc7c2": "0014220b01", "0xc6c2": "0014220b01", "0xc8c2": "0014220b01", "0xc9c2": "0014220b01", "0xc5c2": "0014220b01", "0xc4c2": "0014220b01", "0xcac2": "0014220b01", "0xc3c2": "0014220b01", "0xcbc2": "0014220b01", "0xccc2": "0014220b01", "0xcdc2": "0014220b01", "0xc2c2": "0014220b01", "0xcec2": "0014220b01", "0xd0c2": "0014220b01", "0xd1c2": "0014220b01", "0xd2c2": "0014220b01", "0xd3c2": "0014220b01", "0xd4c2": "0014220b01", "0xd5c2": "0014220b01", "0xd6c2": "0014220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:388"},
    {"address": "C3:18:C9:9C:C8:90", "name": "TP357S (C890)", "service_data": {}, "manufacturer_data": {"0xc7c2": "0014220b01", "0xc6c2": "0014220b01", "0xc8c2": "0014220b01", "0xc9c2": "0014220b01", "0xc5c2": "0014220b01", "0xc4c2": "0014220b01", "0xcac2": "0014220b01", "0xc3c2": "0014220b01", "0xcbc2": "0014220b01", "0xccc2": "0014220b01", "0xcdc2": "0014220b01", "0xc2c2": "0014220b01", "0xcec2": "0014220b01", "0xd0c2": "0014220b01", "0xd1c2": "0014220b01", "0xd2c2": "0014220b01", "0xd3c2": "0014220b01", "0xd4c2": "0014220b01", "0xd5c2": "0014220b01", "0xd6c2": "0014220b01", "0xcfc2": "0014220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:418"},
    {"address": "C3:18:C9:9C:C8:90", "name": "TP357S (C890)", "service_data": {}, "manufacturer_data": {"0xc7c2": "0014220b01", "0xc6c2": "0014220b01", "0xc8c2": "000a220b01", "0xc9c2": "0014220b01", "0xc5c2": "0014220b01", "0xc4c2": "0014220b01", "0xcac2": "0014220b01", "0xc3c2": "0014220b01", "0xcbc2": "0014220b01", "0xccc2": "0014220b01", "0xcdc2": "0014220b01", "0xc2c2": "0014220b01", "0xcec2": "0014220b01", "0xd0c2": "0014220b01", "0xd1c2": "0014220b01", "0xd2c2": "0014220b01", "0xd3c2": "0014220b01", "0xd4c2": "0014220b01", "0xd5c2": "0014220b01", "0xd6c2": "0014220b01", "0xcfc2": "0014220b01"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:449"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0x3300": "00480a3300ffeeddccbbaa"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:490"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0x3300": "00480a3300ffeeddccbbaa", "0x3301": "00480a3300ffeeddccbbaa"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:501"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0x7200": "006a0a33d3b8420040ae426606ae426c54737744f8", "0x7201": "006a0a33d3b8420040ae426606ae426c54737744f8"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:515"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0x3300": "00480a3300ffeeddccbbaa", "0x7201": "006a0a33d3b8420040ae426606ae426c54737744f8"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:529"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0x7200": "006a0a33d3b8420040ae426606ae426c54737744f8", "0x3301": "00480a3300ffeeddccbbaa"}, "service_uuids": ["72fbb631-6f6b-d1ba-db55-2ee6fdd942bd"], "key": None, "source": "thermopro-ble tests/test_parser.py:543"},
    {"address": "C3:18:C9:9C:C8:90", "name": "TP972S", "service_data": {}, "manufacturer_data": {"0xc7c2": "018d00e10a3313fa4200c0fa429af9fa426c54737744f8"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:556"},
    {"address": "C3:18:C9:9C:C8:90", "name": "TP9000NOTHING", "service_data": {}, "manufacturer_data": {"0xc7c2": "018d00e10a3313fa4200c0fa429af9fa426c54737744f8"}, "service_uuids": [], "key": None, "source": "thermopro-ble tests/test_parser.py:569"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357", "service_data": {}, "manufacturer_data": {"0x10c2": "0147022c"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:561 (ThermoPro)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357", "service_data": {}, "manufacturer_data": {"0x76c2": "014a022c"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:562 (ThermoPro)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP357S", "service_data": {}, "manufacturer_data": {"0xd6c2": "0043220b01"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:563 (ThermoPro)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP358", "service_data": {}, "manufacturer_data": {"0xf5c2": "0032022c"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:564 (ThermoPro)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP358", "service_data": {}, "manufacturer_data": {"0xf6c2": "0033022c"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:565 (ThermoPro)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP359", "service_data": {}, "manufacturer_data": {"0xffc2": "0035012c"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:566 (ThermoPro)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "TP393", "service_data": {}, "manufacturer_data": {"0xd4c2": "0037022c"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:567 (ThermoPro)"},
]


def frames():
    out = list(CAPTURED)
    for t10, hum, level in [(-400, 0, 0), (-1, 100, 1), (0, 50, 2), (600, 99, 3), (-32768, 255, 2), (32767, 0, 0),
                            (-55, 42, 2), (1234, 12, 1)]:
        raw = (t10 & 0xFFFF).to_bytes(2, "little")
        whole = bytes([0xC2]) + raw + bytes([hum, level, 0x2C])
        out.append(_frame("TP357 (0001)", {whole[0] | whole[1] << 8: whole[2:].hex()}))
        out.append(_frame("TP393 (0002)", {whole[0] | whole[1] << 8: whole[2:].hex() + "01"}))
        out.append(_frame(None, {whole[0] | whole[1] << 8: whole[2:].hex()}))
    out += [
        _frame("TP357S (0003)", {0xFFC2: "ffff220b01"}), _frame("TP357 (0004)", {0xF1C2: "001d02"}),
        _frame("TP357 (0005)", {0xF1C2: "001d022c", 0xF0C2: "001d022c"}),
    ]
    return out


def reference(frame):
    from thermopro_ble.parser import ThermoProBluetoothDeviceData

    update = ThermoProBluetoothDeviceData().update(_service_info_bleak(frame))
    device = update.devices.get(None)
    model = device.model if device else None
    if not model or not model.startswith(("TP35", "TP39")):
        return None  # TP96x / TP97x meat thermometers: not in our list
    values = _values(update)
    return {"values": values, "model": model} if values else None
