"""Differential-check adapter for the `sensorpush` family (SPEC §13), see scripts/check-decoders.

frames(): frames captured from real devices in the reference's own test suite, then
frames generated here (edge values, corrupt values, ambiguous and foreign frames).
reference(frame): what the reference (sensorpush-ble) reads from the frame, in our value names; None
when it publishes no value for it (it refuses the frame, or the model is outside our list:
none).

Manufacturer data are given as BlueZ hands them: company id -> the bytes after the id.
"""

REQUIRES = ["sensorpush-ble==1.9.0"]

# TheengsDecoder does not round (20.5325 °C where sensorpush-ble and we give 20.53) and computes
# in single precision (44.9009 % for 17960 steps of 0.0025 %, 300.02 hPa for 30001 Pa): its
# values differ from ours by up to 0.01, not compared.
THEENGS = False


def _md(frame):
    return {int(k, 16): bytes.fromhex(v) for k, v in (frame.get("manufacturer_data") or {}).items()}


def _uuids(frame):
    out = []
    for u in frame.get("service_uuids") or []:
        u = u.lower()
        if len(u) == 4:
            u = f"0000{u}-0000-1000-8000-00805f9b34fb"
        out.append(u)
    return out


def _values(update, drop_prefixes=()):
    values = {}
    for key, value in update.entity_values.items():
        if key.device_id is not None:
            continue
        name = key.key
        if name == "signal_strength" or (drop_prefixes and name.startswith(drop_prefixes)):
            continue
        if value.native_value is None or value.native_value == "error":
            continue
        values[name] = value.native_value
    return values


def _service_info_bleak(frame):
    from bleak.backends.device import BLEDevice
    from habluetooth import BluetoothServiceInfoBleak

    name = frame.get("name") or ""
    return BluetoothServiceInfoBleak(
        name=name, manufacturer_data=_md(frame), service_uuids=_uuids(frame), address=frame["address"], rssi=-60,
        service_data={}, source="local", device=BLEDevice(name=name, address=frame["address"], details={}),
        time=0.0, advertisement=None, connectable=True, tx_power=0, raw=None)


def _frame(name, md, uuids=(), source="generated"):
    return {"address": "A4:C1:38:00:00:01", "name": name, "service_data": {},
            "manufacturer_data": {f"0x{k:04x}": v for k, v in md.items()}, "service_uuids": list(uuids),
            "key": None, "source": source}


CAPTURED = [
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0x7104": "03e047", "0x2c07": "fe0001", "0x9c04": "b40d41", "0x1504": "ae443e", "0x2b04": "8dc03e", "0x2504": "951b3d", "0xd604": "ab273d", "0x0b04": "0aea3d", "0x3704": "a6b23d", "0xd504": "8f183d", "0x9f04": "0f5f3d", "0xdc04": "8e173d", "0xc004": "5ffd3c", "0xa804": "39e83c", "0x2c04": "2be03c", "0x5604": "8d163d", "0xc604": "6a033d", "0x7c04": "6c043d", "0xf804": "83113d", "0x0d04": "c7363d", "0x9304": "8e173d", "0xa704": "780b3d", "0x2604": "ad283d", "0x0504": "991d3d", "0x2a04": "760a3d", "0x3104": "6b043d", "0x5504": "55f83c", "0xab04": "3deb3c", "0x0e04": "43ee3c", "0xa604": "32e53c", "0x0f04": "24dd3c"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:52"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0x7104": "03e047", "0x2c07": "fe0001", "0x9c04": "b40d41", "0x1504": "ae443e", "0x2b04": "8dc03e", "0x2504": "951b3d", "0xd604": "ab273d", "0x0b04": "0aea3d", "0x3704": "a6b23d", "0xd504": "8f183d", "0x9f04": "0f5f3d", "0xdc04": "8e173d", "0xc004": "5ffd3c", "0xa804": "39e83c", "0x2c04": "2be03c", "0x5604": "8d163d", "0xc604": "6a033d", "0x7c04": "6c043d", "0xf804": "83113d", "0x0d04": "c7363d", "0x9304": "8e173d", "0xa704": "780b3d", "0x2604": "ad283d", "0x0504": "991d3d", "0x2a04": "760a3d", "0x3104": "6b043d", "0x5504": "55f83c", "0xab04": "3deb3c", "0x0e04": "43ee3c", "0xa604": "32e53c", "0x0f04": "24dd3c", "0x3904": "36e73c"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:94"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0x4503": "ad00010000", "0x0500": "e7b4e1afb6", "0x0900": "37e13ab7b6", "0xd900": "23c724adb6", "0xe500": "3b01259db6", "0xad00": "a27c2778b6", "0xfa00": "3baddca7b6", "0x7000": "dbe85ca2b6", "0x1c00": "b5bde0afb6", "0x2c00": "00537daeb6", "0x1000": "e9ef8ebab6", "0xaf00": "85a23db5b6", "0x8000": "8662e9c1b6", "0x9200": "8b533cc1b6", "0x6300": "b4b2e7bbb6", "0xc800": "aedcc897b6", "0xc000": "4f804fc7b6", "0x4500": "0eb771a0b6", "0x8800": "9af6f8c3b6", "0x5500": "47d9d6a7b6", "0x0200": "aa144dc5b6", "0xa400": "fdb4d7a5b6", "0x4100": "9bddd9a5b6", "0x8100": "99db42b9b6", "0x6200": "eeeceabfb6", "0x6000": "c3471699b6", "0xc400": "88519dc4b6", "0xe200": "7e1ab087b6", "0x0b00": "3038a2c4b6", "0x4d00": "2cf1759ab6", "0x6900": "8f0f28a9b6", "0xd500": "55be1c9bb6", "0x1f00": "011e93bcb6", "0xcf00": "5219b991b6", "0x2500": "0fb99a87b6", "0xb900": "41e136b5b6", "0x3700": "728253c7b6", "0xec00": "2341c576b6", "0x4e00": "f53d80a0b6", "0x7900": "0d991391b6", "0x2400": "08223ebdb6", "0x4200": "22944cc7b6", "0xd600": "aece259db6", "0x5300": "b9e9e1b9b6", "0xa000": "157ddabbb6", "0x3f00": "73e9f7c5b6", "0x8f00": "add68fc0b6", "0x0600": "1ad18cb0b6", "0x7800": "f46093b4b6", "0x4600": "6d4969aeb6", "0x7700": "8c7d1999b6", "0xf200": "b47becbdb6", "0x7600": "a8ac229bb6", "0x6d00": "44cb38b5b6", "0xb200": "fcb5dfa9b6", "0x3000": "e911a78fb6", "0x1900": "5ccfe0b7b6", "0x2900": "505fe1bbb6", "0xce00": "6676d3a1b6", "0x9400": "b17f27afb6", "0x1a00": "80576890b6", "0x3e00": "d791e0b7b6", "0x6e00": "503cc595b6", "0x9300": "4e4ec778b6", "0x2e00": "037a30abb6", "0xbf00": "429eaac8b6", "0xff00": "77b1eeb9b6", "0xdc00": "b1fa1f99b6", "0xe700": "5fd51c97b6", "0x6700": "be82bd93b6", "0x1d00": "41c81999b6", "0xc100": "efda91b4b6", "0x6100": "6cc033bdb6", "0xbc00": "567334a9b6", "0xbd00": "ac6b3bbbb6", "0x4f00": "d84fe5b9b6", "0x8c00": "4e6ae1bbb6", "0xca00": "96bacc9bb6", "0x5b00": "da5c769cb6", "0x9900": "306ae3b3b6", "0x7300": "f9c94ac3b6", "0xd300": "e91c88a6b6", "0xf300": "1b0fe3bfb6", "0x8200": "c27383a2b6", "0x5000": "a9c5c495b6", "0xc600": "d54fe5b7b6", "0x4c00": "54207d9eb6", "0x6a00": "d30adabbb6", "0x8600": "101634b7b6", "0x0d00": "22b11c99b6", "0xc700": "6974bf91b6", "0x7500": "d7c5b893b6", "0xb600": "142dbc95b6", "0xee00": "7ccdb88db6", "0x4000": "3495ce9bb6", "0x5a00": "99ca9f8db6", "0xe300": "50cc3bb7b6", "0x5900": "8a344cc5b6", "0x3200": "656ce0adb6", "0x2300": "78658eb8b6", "0x3500": "ec328fb8b6", "0x9000": "0dde31b5b6", "0xfc00": "f7f8176eb6", "0x9a00": "3fbc87a8b6", "0x2100": "fa8ca68fb6", "0xd200": "f392ddb3b6", "0x5c00": "41b541c3b6", "0xcb00": "b6c9a55eb6", "0x2600": "ffa17fa6b6", "0x4a00": "c0dd49c1b6", "0xb700": "0574eab9b6", "0x8400": "dba8d9a3b6", "0x1800": "2bcb3fb9b6", "0x2a00": "3b933ab9b6", "0x9f00": "8e857096b6", "0xe400": "91f2d09db6", "0x7f00": "ec8085a4b6", "0xda00": "2d9880b0b6", "0x6500": "90d585aab6", "0xe600": "3a4a81bab6", "0x7a00": "80fedda5b6", "0xd700": "6f3133a9b6", "0xc500": "74e549c3b6", "0x9100": "d30589a6b6", "0x3100": "06003cbdb6", "0xea00": "dd62be93b6", "0x6b00": "4f420f8fb6", "0xf100": "1de81897b6", "0x7400": "23ccdebdb6", "0x7d00": "587d33b5b6", "0xae00": "b8a11e99b6", "0x1e00": "e7517298b6", "0xb100": "fb49108fb6", "0xf800": "c6da28a5b6", "0x6400": "4fdae2b7b6", "0x5f00": "72146e98b6", "0xf400": "b087f4c1b6", "0xf900": "96d61495b6", "0x5400": "5b850f93b6", "0x2000": "b784d3a5b6", "0x7200": "bfdf6790b6", "0xfd00": "a284e5bfb6", "0xdf00": "39098ab4b6", "0x5700": "727e289fb6", "0xd800": "2e03c697b6", "0x8700": "b5727fa0b6", "0xcc00": "e2c31ca3b6", "0x3600": "383ee6b5b6", "0xb400": "597f40b9b6", "0x8500": "2f5f6b96b6", "0x1200": "39954bc3b6", "0xf500": "4b2d3b84b6", "0xac00": "d5d0a7c6b6", "0x8b00": "3f7d44cdb6", "0xa800": "328f8aaeb6", "0xb800": "a1ffe6bbb6", "0xef00": "a37f25a5b6", "0xe900": "f1b88db4b6", "0xe000": "88ee32b7b6", "0x8d00": "5cd59cc0b6", "0x9800": "6e125f90b6", "0xde00": "246747c3b6", "0x4700": "f996fcc5b6", "0x4800": "62cd41bfb6", "0xe100": "3a1940bfb6", "0x4900": "24e2cb99b6", "0x9700": "0c412db9b6", "0xbe00": "568cdaabb6", "0xb500": "22574c5db6", "0x2700": "a8aba2d2b6", "0xa600": "340b1f9bb6", "0xa100": "294d25abb6", "0xc200": "4d2536a9b6", "0xa500": "2c1e86b6b6", "0x5200": "ab0532bdb6", "0xd100": "8af684aab6", "0xdb00": "dabfa460b6", "0xd000": "183ac899b6", "0x4b00": "b1b489bcb6", "0x9600": "ba3d1f99b6", "0xa300": "e4a32bb1b6", "0x1500": "7ad694b2b6", "0xba00": "881fe3b9b6", "0xed00": "9c857bb4b6", "0x0e00": "e7dca8c6b6", "0x6f00": "dcdd5490b6", "0x3800": "87a6f2c5b6", "0xab00": "39798aaeb6", "0x9c00": "e28c5361b6", "0x1600": "a55f30abb6", "0x3900": "bfa980aeb6", "0xf700": "d641c599b6", "0x3400": "3dcd4cc3b6", "0x2200": "f9d127a1b6", "0x2b00": "dcedf6c5b6", "0x6800": "9b81c299b6", "0x3300": "8840daabb6", "0x1700": "70ea85aab6", "0x2f00": "4cdbe9b9b6", "0x0c00": "241e83acb6", "0x7c00": "cbe630adb6", "0x3a00": "ee9de8c9b6", "0xb300": "4d6f8eb2b6", "0x0300": "a68d3db5b6", "0xdd00": "02ba8db0b6", "0xc300": "a3ac249db6", "0xa200": "9d4de0abb6", "0xfe00": "8921f2bfb6", "0x0400": "89bf8db4b6", "0x0000": "b6c5c297b6", "0xf000": "ada87398b6", "0x4400": "c2993fbbb6", "0xa700": "52f831a9b6", "0x9500": "8389229db6", "0xaa00": "b7a2279fb6", "0x8a00": "3b64a2d0b6", "0xc900": "a4856890b6", "0x8900": "fb9040bfb6", "0x9b00": "f5cb04a1b6", "0x1100": "6ad06592b6", "0x7e00": "cc99bf95b6", "0x0f00": "d0ddc799b6", "0xb000": "55f2f0c3b6", "0xbb00": "dc07229bb6", "0xeb00": "308adfbbb6", "0x7100": "e7a8dcafb6", "0xd400": "631585b4b6", "0x4300": "c0517fa0b6", "0x1400": "4240779ab6", "0xa900": "724385aab6", "0x5d00": "5be33db7b6", "0x0100": "9c9f90b2b6", "0x1b00": "f218dcabb6", "0x3d00": "1b2c2fb5b6", "0x3b00": "7b3dbf91b6", "0x1300": "673fe3b9b6", "0x8e00": "88ac32adb6", "0x5600": "4f911895b6", "0xcd00": "718d53c9b6", "0xf600": "5a587fa2b6", "0xe800": "efdca5c4b6", "0x3c00": "d09a44c1b6", "0x2800": "619292b0b6", "0x0800": "202f5d9ab6", "0x5100": "9dde6b94b6", "0x0a00": "f57a3db3b6", "0x5800": "6a40e2adb6", "0x6600": "181fc578b6", "0x9e00": "dffe3dbbb6", "0x2d00": "32f73cbbb6", "0x0700": "240a1c99b6", "0x9d00": "aa88ffc9b6", "0x6c00": "87acb88db6", "0x8300": "7b3a1b97b6", "0xfb00": "420d2ea9b6", "0x7b00": "98fab691b6"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:137"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0x4503": "ad00010000", "0x5e00": "365b3abbb6", "0x0500": "e7b4e1afb6", "0x0900": "37e13ab7b6", "0xd900": "23c724adb6", "0xe500": "3b01259db6", "0xad00": "a27c2778b6", "0xfa00": "3baddca7b6", "0x7000": "dbe85ca2b6", "0x1c00": "b5bde0afb6", "0x2c00": "00537daeb6", "0x1000": "e9ef8ebab6", "0xaf00": "85a23db5b6", "0x8000": "8662e9c1b6", "0x9200": "8b533cc1b6", "0x6300": "b4b2e7bbb6", "0xc800": "aedcc897b6", "0xc000": "4f804fc7b6", "0x4500": "0eb771a0b6", "0x8800": "9af6f8c3b6", "0x5500": "47d9d6a7b6", "0x0200": "aa144dc5b6", "0xa400": "fdb4d7a5b6", "0x4100": "9bddd9a5b6", "0x8100": "99db42b9b6", "0x6200": "eeeceabfb6", "0x6000": "c3471699b6", "0xc400": "88519dc4b6", "0xe200": "7e1ab087b6", "0x0b00": "3038a2c4b6", "0x4d00": "2cf1759ab6", "0x6900": "8f0f28a9b6", "0xd500": "55be1c9bb6", "0x1f00": "011e93bcb6", "0xcf00": "5219b991b6", "0x2500": "0fb99a87b6", "0xb900": "41e136b5b6", "0x3700": "728253c7b6", "0xec00": "2341c576b6", "0x4e00": "f53d80a0b6", "0x7900": "0d991391b6", "0x2400": "08223ebdb6", "0x4200": "22944cc7b6", "0xd600": "aece259db6", "0x5300": "b9e9e1b9b6", "0xa000": "157ddabbb6", "0x3f00": "73e9f7c5b6", "0x8f00": "add68fc0b6", "0x0600": "1ad18cb0b6", "0x7800": "f46093b4b6", "0x4600": "6d4969aeb6", "0x7700": "8c7d1999b6", "0xf200": "b47becbdb6", "0x7600": "a8ac229bb6", "0x6d00": "44cb38b5b6", "0xb200": "fcb5dfa9b6", "0x3000": "e911a78fb6", "0x1900": "5ccfe0b7b6", "0x2900": "505fe1bbb6", "0xce00": "6676d3a1b6", "0x9400": "b17f27afb6", "0x1a00": "80576890b6", "0x3e00": "d791e0b7b6", "0x6e00": "503cc595b6", "0x9300": "4e4ec778b6", "0x2e00": "037a30abb6", "0xbf00": "429eaac8b6", "0xff00": "77b1eeb9b6", "0xdc00": "b1fa1f99b6", "0xe700": "5fd51c97b6", "0x6700": "be82bd93b6", "0x1d00": "41c81999b6", "0xc100": "efda91b4b6", "0x6100": "6cc033bdb6", "0xbc00": "567334a9b6", "0xbd00": "ac6b3bbbb6", "0x4f00": "d84fe5b9b6", "0x8c00": "4e6ae1bbb6", "0xca00": "96bacc9bb6", "0x5b00": "da5c769cb6", "0x9900": "306ae3b3b6", "0x7300": "f9c94ac3b6", "0xd300": "e91c88a6b6", "0xf300": "1b0fe3bfb6", "0x8200": "c27383a2b6", "0x5000": "a9c5c495b6", "0xc600": "d54fe5b7b6", "0x4c00": "54207d9eb6", "0x6a00": "d30adabbb6", "0x8600": "101634b7b6", "0x0d00": "22b11c99b6", "0xc700": "6974bf91b6", "0x7500": "d7c5b893b6", "0xb600": "142dbc95b6", "0xee00": "7ccdb88db6", "0x4000": "3495ce9bb6", "0x5a00": "99ca9f8db6", "0xe300": "50cc3bb7b6", "0x5900": "8a344cc5b6", "0x3200": "656ce0adb6", "0x2300": "78658eb8b6", "0x3500": "ec328fb8b6", "0x9000": "0dde31b5b6", "0xfc00": "f7f8176eb6", "0x9a00": "3fbc87a8b6", "0x2100": "fa8ca68fb6", "0xd200": "f392ddb3b6", "0x5c00": "41b541c3b6", "0xcb00": "b6c9a55eb6", "0x2600": "ffa17fa6b6", "0x4a00": "c0dd49c1b6", "0xb700": "0574eab9b6", "0x8400": "dba8d9a3b6", "0x1800": "2bcb3fb9b6", "0x2a00": "3b933ab9b6", "0x9f00": "8e857096b6", "0xe400": "91f2d09db6", "0x7f00": "ec8085a4b6", "0xda00": "2d9880b0b6", "0x6500": "90d585aab6", "0xe600": "3a4a81bab6", "0x7a00": "80fedda5b6", "0xd700": "6f3133a9b6", "0xc500": "74e549c3b6", "0x9100": "d30589a6b6", "0x3100": "06003cbdb6", "0xea00": "dd62be93b6", "0x6b00": "4f420f8fb6", "0xf100": "1de81897b6", "0x7400": "23ccdebdb6", "0x7d00": "587d33b5b6", "0xae00": "b8a11e99b6", "0x1e00": "e7517298b6", "0xb100": "fb49108fb6", "0xf800": "c6da28a5b6", "0x6400": "4fdae2b7b6", "0x5f00": "72146e98b6", "0xf400": "b087f4c1b6", "0xf900": "96d61495b6", "0x5400": "5b850f93b6", "0x2000": "b784d3a5b6", "0x7200": "bfdf6790b6", "0xfd00": "a284e5bfb6", "0xdf00": "39098ab4b6", "0x5700": "727e289fb6", "0xd800": "2e03c697b6", "0x8700": "b5727fa0b6", "0xcc00": "e2c31ca3b6", "0x3600": "383ee6b5b6", "0xb400": "597f40b9b6", "0x8500": "2f5f6b96b6", "0x1200": "39954bc3b6", "0xf500": "4b2d3b84b6", "0xac00": "d5d0a7c6b6", "0x8b00": "3f7d44cdb6", "0xa800": "328f8aaeb6", "0xb800": "a1ffe6bbb6", "0xef00": "a37f25a5b6", "0xe900": "f1b88db4b6", "0xe000": "88ee32b7b6", "0x8d00": "5cd59cc0b6", "0x9800": "6e125f90b6", "0xde00": "246747c3b6", "0x4700": "f996fcc5b6", "0x4800": "62cd41bfb6", "0xe100": "3a1940bfb6", "0x4900": "24e2cb99b6", "0x9700": "0c412db9b6", "0xbe00": "568cdaabb6", "0xb500": "22574c5db6", "0x2700": "a8aba2d2b6", "0xa600": "340b1f9bb6", "0xa100": "294d25abb6", "0xc200": "4d2536a9b6", "0xa500": "2c1e86b6b6", "0x5200": "ab0532bdb6", "0xd100": "8af684aab6", "0xdb00": "dabfa460b6", "0xd000": "183ac899b6", "0x4b00": "b1b489bcb6", "0x9600": "ba3d1f99b6", "0xa300": "e4a32bb1b6", "0x1500": "7ad694b2b6", "0xba00": "881fe3b9b6", "0xed00": "9c857bb4b6", "0x0e00": "e7dca8c6b6", "0x6f00": "dcdd5490b6", "0x3800": "87a6f2c5b6", "0xab00": "39798aaeb6", "0x9c00": "e28c5361b6", "0x1600": "a55f30abb6", "0x3900": "bfa980aeb6", "0xf700": "d641c599b6", "0x3400": "3dcd4cc3b6", "0x2200": "f9d127a1b6", "0x2b00": "dcedf6c5b6", "0x6800": "9b81c299b6", "0x3300": "8840daabb6", "0x1700": "70ea85aab6", "0x2f00": "4cdbe9b9b6", "0x0c00": "241e83acb6", "0x7c00": "cbe630adb6", "0x3a00": "ee9de8c9b6", "0xb300": "4d6f8eb2b6", "0x0300": "a68d3db5b6", "0xdd00": "02ba8db0b6", "0xc300": "a3ac249db6", "0xa200": "9d4de0abb6", "0xfe00": "8921f2bfb6", "0x0400": "89bf8db4b6", "0x0000": "b6c5c297b6", "0xf000": "ada87398b6", "0x4400": "c2993fbbb6", "0xa700": "52f831a9b6", "0x9500": "8389229db6", "0xaa00": "b7a2279fb6", "0x8a00": "3b64a2d0b6", "0xc900": "a4856890b6", "0x8900": "fb9040bfb6", "0x9b00": "f5cb04a1b6", "0x1100": "6ad06592b6", "0x7e00": "cc99bf95b6", "0x0f00": "d0ddc799b6", "0xb000": "55f2f0c3b6", "0xbb00": "dc07229bb6", "0xeb00": "308adfbbb6", "0x7100": "e7a8dcafb6", "0xd400": "631585b4b6", "0x4300": "c0517fa0b6", "0x1400": "4240779ab6", "0xa900": "724385aab6", "0x5d00": "5be33db7b6", "0x0100": "9c9f90b2b6", "0x1b00": "f218dcabb6", "0x3d00": "1b2c2fb5b6", "0x3b00": "7b3dbf91b6", "0x1300": "673fe3b9b6", "0x8e00": "88ac32adb6", "0x5600": "4f911895b6", "0xcd00": "718d53c9b6", "0xf600": "5a587fa2b6", "0xe800": "efdca5c4b6", "0x3c00": "d09a44c1b6", "0x2800": "619292b0b6", "0x0800": "202f5d9ab6", "0x5100": "9dde6b94b6", "0x0a00": "f57a3db3b6", "0x5800": "6a40e2adb6", "0x6600": "181fc578b6", "0x9e00": "dffe3dbbb6", "0x2d00": "32f73cbbb6", "0x0700": "240a1c99b6", "0x9d00": "aa88ffc9b6", "0x6c00": "87acb88db6", "0x8300": "7b3a1b97b6", "0xfb00": "420d2ea9b6", "0x7b00": "98fab691b6"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:403"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush HT.w 0CA1", "service_data": {}, "manufacturer_data": {"0x9a04": "c9a546"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:837"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush HT.w 0CA1", "service_data": {}, "manufacturer_data": {"0x7504": "536446"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:958"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "s", "service_data": {}, "manufacturer_data": {"0x4834": "6205"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090aa9"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1198"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "s", "service_data": {}, "manufacturer_data": {"0xffff": "ff07"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090aa9"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1258"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "s", "service_data": {}, "manufacturer_data": {"0x0000": "0004"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090aa9"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1318"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush TC.x EEFF", "service_data": {}, "manufacturer_data": {"0xf908": "0d0000"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1505"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush TC.x EEFF", "service_data": {}, "manufacturer_data": {"0xe808": "0d0000"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1555"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush TC.x EEFF", "service_data": {}, "manufacturer_data": {"0xe808": "0d0000", "0xf908": "0d0300"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1602"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush TC.x EEFF", "service_data": {}, "manufacturer_data": {"0xe808": "0d0000", "0xf908": "0d0100"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1649"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush TC.x EEFF", "service_data": {}, "manufacturer_data": {"0xe808": "0d0000", "0xf908": "0d0200"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1696"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush TC EEFF", "service_data": {}, "manufacturer_data": {"0x0008": "000000"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1746"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "SensorPush TC EEFF", "service_data": {}, "manufacturer_data": {"0xe808": "0d0000"}, "service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "key": None, "source": "sensorpush-ble tests/test_parser.py:1799"},
]


def _packed(kind, counts, length):
    """A later-model frame: page 0, device type `kind`, the counts packed as the format packs them."""
    sizes = {64: [72001, 40001, 95001], 65: [66001, 40001], 66: [32001]}[kind]
    packed, scale = 0, 1
    for count, size in zip(counts, sizes):
        packed += count * scale
        scale *= size
    whole = bytes([(kind - 64) << 2]) + packed.to_bytes(length - 1, "little")
    return {whole[0] | whole[1] << 8: whole[2:].hex()}


def frames():
    out = list(CAPTURED)
    v2 = ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"]
    ht1 = ["ef090000-11d6-42ba-93b8-9dd7ec090aa9"]
    for counts in [(0, 0, 0), (1, 1, 1), (3, 7, 12345), (25000, 18000, 71325), (72000, 40000, 95000), (36001, 20001, 47501),
                   (13, 39999, 1)]:
        out.append(_frame("SensorPush HTP.xw 0001", _packed(64, counts, 7), v2))
    for counts in [(0, 0), (1, 1), (3, 7), (24213, 17960), (66000, 40000), (5, 39995), (33333, 22222)]:
        out.append(_frame("SensorPush HT.w 0002", _packed(65, counts, 5), v2))
        out.append(_frame(None, _packed(65, counts, 5), v2))
    for counts in [(0,), (1,), (3,), (3849,), (32000,), (16001,)]:
        out.append(_frame("SensorPush TC.x 0003", _packed(66, counts, 5), v2))
    for raw_h, raw_t in [(0, 0), (4095, 16383), (1, 1), (2000, 7000), (300, 4000), (4000, 100)]:
        d = [raw_h & 0xFF, (raw_h >> 8) | ((raw_t & 0x0F) << 4), (raw_t >> 4) & 0xFF, (raw_t >> 12) | (1 << 2)]
        out.append(_frame("s", {d[0] | d[1] << 8: bytes(d[2:]).hex()}, ht1))
    out += [
        _frame("SensorPush TC.x EEFF", {0xF909: "0d0000"}, v2), _frame("SensorPush HT.w", {0x9A07: "c9a546"}, v2),
        _frame("s", {0x4834: "6209"}, ht1), _frame("s", {0x4834: "6205"}),
    ]
    return out


def reference(frame):
    from sensorpush_ble.parser import SensorPushBluetoothDeviceData

    update = SensorPushBluetoothDeviceData().update(_service_info_bleak(frame))
    device = update.devices.get(None)
    values = _values(update)
    return {"values": values, "model": device.model if device else None} if values else None
