"""Differential-check adapter for the `govee` family (SPEC §13), see scripts/check-decoders.

frames(): frames captured from real devices in the reference's own test suite and in Theengs Decoder's (tests/BLE/test_ble.cpp), then
frames generated here (edge values, corrupt values, ambiguous and foreign frames).
reference(frame): what the reference (govee-ble) reads from the frame, in our value names; None
when it publishes no value for it (it refuses the frame, or the model is outside our list:
H5106, H5140, H5112, H5178, H5127, the H512x buttons and the H518x/H519x meat thermometers).

Manufacturer data are given as BlueZ hands them: company id -> the bytes after the id.
"""

REQUIRES = ["govee-ble==1.5.2"]


# Frames where we and govee-ble disagree and the format says we are right; reference() says
# None for them (we refuse them), each with its reason.
WE_REFUSE = {
    "govee-ble tests/test_parser.py:424":
        "company id 0x0001 (Ericsson's) with 8 bytes and the name 'G': govee-ble reads any nameless "
        "8-byte 0x0001 frame as an H5108, but the H5140 (CO2) and H5112 (probes) send 8-byte 0x0001 "
        "frames of other layouts; without a Govee model in the name the bytes do not tell",
}


import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bleak_frames import _md, _service_info_bleak, _uuids, _values  # noqa: E402
from driver import TheengsException  # noqa: E402

# TheengsDecoder (2.5.0) is compared on every Govee frame it recognises, except the values below,
# where it is wrong by the format (govee-ble and we agree on all of them):
#   - H5072/H5075 negative temperatures: the 3 bytes after the first pack temperature and humidity
#     as n = |t| * 10000 + h * 10 (t in 0.1 °C steps, h in 0.1 %), bit 23 the sign. Its positive
#     path truncates n / 1000 to 0.1 °C; its negative path ("_tempc") divides n & 0x7fffff by
#     10000 without truncating, so the humidity's digits leak into the temperature (0x811f09:
#     -7.3481 °C, where the format says -7.3 °C and 48.1 %). Its H5100-family definition truncates
#     on both paths and is compared.
#   - the battery byte with bit 7 set: bit 7 is the sensor's error flag, the battery is bits 0-6
#     (govee-ble: data & 0x7f, the error flag drops the temperature and humidity); TheengsDecoder
#     publishes the byte as it is (228 % for 0xe4), in its H5072/75 and H5100-family definitions.
#     Frames with bit 7 clear are compared.
#   - H5055 probe temperatures below 0 °C: each probe is a signed 16-bit little-endian °C; it
#     reads them unsigned (65526 for -10 °C). Probes at 0 °C and above are compared.
THEENGS_EXCEPTIONS = [
    TheengsException("H5072/75 negative temperature (humidity digits not truncated)", {"tempc"},
                     models={"H5072/75"}, when=lambda frame, theirs, key: _md_bytes(frame)[1] & 0x80),
    TheengsException("battery byte with the error flag (bit 7) unmasked", {"batt"},
                     models={"H5072/75", "H5100/01/02/04/05/08/74/77"},
                     when=lambda frame, theirs, key: theirs[key] >= 0x80),
    TheengsException("H5055 probe below 0 °C read unsigned", {f"tempc{n}" for n in range(1, 7)},
                     models={"H5055"}, when=lambda frame, theirs, key: theirs[key] >= 0x8000),
]


def _md_bytes(frame):
    """The bytes after the company id of the frame's first manufacturer-data entry."""
    return bytes.fromhex(next(iter(frame["manufacturer_data"].values())))


def _frame(name, md, uuids=(), source="generated"):
    return {"address": "A4:C1:38:00:00:01", "name": name, "service_data": {},
            "manufacturer_data": {f"0x{k:04x}": v for k, v in md.items()}, "service_uuids": list(uuids),
            "key": None, "source": source}


CAPTURED = [
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0xec88": "00ba0af90f63020101"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:20"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5052_E81B", "service_data": {}, "manufacturer_data": {"0xec88": "001c01a7143b000002"}, "service_uuids": ["0000180a-0000-1000-8000-00805f9b34fb", "0000fef5-0000-1000-8000-00805f9b34fb", "0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:31"},
    {"address": "A4:C1:38:2F:AF:55", "name": "", "service_data": {}, "manufacturer_data": {"0xaf2f": "55006401201a00ffffffff201900ffffffff0000", "0x004c": "0215494e54454c4c495f524f434b535f48575072f2ffc2"}, "service_uuids": ["00005550-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:46"},
    {"address": "A4:C1:38:2F:AF:55", "name": "", "service_data": {}, "manufacturer_data": {"0xaf2f": "5500644c201a00ffffffff2019001400b1000000", "0x004c": "0215494e54454c4c495f524f434b535f48575072f2ffc2"}, "service_uuids": ["00005550-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:60"},
    {"address": "A4:C1:38:2F:AF:55", "name": "", "service_data": {}, "manufacturer_data": {"0xaf2f": "550064bf201a00ffffb100201900ffffffff0000", "0x004c": "0215494e54454c4c495f524f434b535f48575072f2ffc2"}, "service_uuids": ["00005550-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:74"},
    {"address": "A4:C1:38:2F:AF:55", "name": "", "service_data": {}, "manufacturer_data": {"0xaf2f": "550064fb201a00ffffb100201900ffffffff0000", "0x004c": "0215494e54454c4c495f524f434b535f48575072f2ffc2"}, "service_uuids": ["00005550-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:88"},
    {"address": "A4:C1:38:2F:AF:55", "name": "", "service_data": {}, "manufacturer_data": {"0xaf2f": "55006402201a00ffffffff201900ffffffff0000", "0x004c": "0215494e54454c4c495f524f434b535f48575072f2ffc2"}, "service_uuids": ["00005550-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:105"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5071_FD12", "service_data": {}, "manufacturer_data": {"0xec88": "00210ab61218c80001"}, "service_uuids": ["0000180a-0000-1000-8000-00805f9b34fb", "0000fef5-0000-1000-8000-00805f9b34fb", "0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:119"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5074_5FF4", "service_data": {}, "manufacturer_data": {"0xec88": "00e609bc126402", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:134"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5075_2762", "service_data": {}, "manufacturer_data": {"0xec88": "000341c264004c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:148"},
    {"address": "A4:C1:38:DD:DB:F8", "name": "GVH5075_DBF8", "service_data": {}, "manufacturer_data": {"0xec88": "00034db26400"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:161"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5075_2762", "service_data": {}, "manufacturer_data": {"0xec88": "00bc00043e27"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:172"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5075_2762", "service_data": {}, "manufacturer_data": {"0xec88": "004a00283b00", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:183"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5075_2762", "service_data": {}, "manufacturer_data": {"0xec88": "00030fc93500"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:197"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5072_ABCD", "service_data": {}, "manufacturer_data": {"0xec88": "00034db26400"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:208"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_ABCD", "service_data": {}, "manufacturer_data": {"0xec88": "00034db26400"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:221"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5129_ABCD", "service_data": {}, "manufacturer_data": {"0xec88": "00034db26400"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:233"},
    {"address": "C4:35:33:33:77:38", "name": "GVH5100_7738", "service_data": {}, "manufacturer_data": {"0x0001": "010103465464"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:244"},
    {"address": "0C:4E:A0:DB:30:3A", "name": "GV5140303A", "service_data": {}, "manufacturer_data": {"0x0001": "0101033dee023e00"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:255"},
    {"address": "0C:4E:A0:DB:30:3A", "name": "GV5140303A", "service_data": {}, "manufacturer_data": {"0x0001": "0101031abd025d00"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:266"},
    {"address": "0C:4E:A0:DB:30:3A", "name": "GV5140303A", "service_data": {}, "manufacturer_data": {"0x0001": "0101031abc025800"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:277"},
    {"address": "0C:4E:A0:DB:30:3A", "name": "GV5140303A", "service_data": {}, "manufacturer_data": {"0x0001": "0101031abc025801"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:288"},
    {"address": "CB:37:34:36:5A:4E", "name": "GVH5103_5A4E", "service_data": {}, "manufacturer_data": {"0x0001": "010103513e644c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:299"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5104_311C", "service_data": {}, "manufacturer_data": {"0x0001": "010103fc2662", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:313"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5104_311C", "service_data": {}, "manufacturer_data": {"0x0001": "01010203d95e", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:333"},
    {"address": "D7:35:33:33:73:36", "name": "GVH5105_7336", "service_data": {}, "manufacturer_data": {"0x0001": "0101033aed644c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:350"},
    {"address": "D7:35:33:33:73:36", "name": "GVH5105_7336", "service_data": {}, "manufacturer_data": {"0x0001": "010103325e64"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:363"},
    {"address": "CC:32:37:35:4E:05", "name": "GVH5106_4E05", "service_data": {}, "manufacturer_data": {"0x0001": "01010ed13298"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:374"},
    {"address": "CC:32:37:35:4E:05", "name": "GVH5106_4E05", "service_data": {}, "manufacturer_data": {"0x0001": "010181867cd8"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:385"},
    {"address": "C5:22:77:8E:E0:1A", "name": "RZSS", "service_data": {}, "manufacturer_data": {"0x0409": "8c645f64", "0x0001": "01010b005864"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:399"},
    {"address": "A4:C1:38:75:2B:C8", "name": "GV51085242", "service_data": {}, "manufacturer_data": {"0x0001": "010103c730640000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:410"},
    {"address": "A4:C1:38:75:2B:C2", "name": "G", "service_data": {}, "manufacturer_data": {"0x0001": "010103c730640000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:424"},
    {"address": "A4:C1:38:75:2B:C8", "name": "GV51085242", "service_data": {}, "manufacturer_data": {"0x0001": "010103c730e40000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:438"},
    {"address": "CC:38:30:34:0C:25", "name": "GV51080C25", "service_data": {}, "manufacturer_data": {"0x0001": "01010346486400004c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:452"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5110_2EC8", "service_data": {}, "manufacturer_data": {"0x0001": "0101038efe64"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:465"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5110_2EC8", "service_data": {}, "manufacturer_data": {"0x0001": "0101038efe644c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:476"},
    {"address": "C1:37:37:32:0F:45", "name": "GV5121195A", "service_data": {}, "manufacturer_data": {"0xef88": "59940000f0b91937ae50b6372c866ac2f3d061e717c02cef"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:489"},
    {"address": "C1:37:37:32:0F:45", "name": "GV5121195A", "service_data": {}, "manufacturer_data": {"0xef88": "59940006a3663665c8e6fd7604afe76bbfabebbfb3a3d519"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:502"},
    {"address": "C1:37:37:32:0F:45", "name": "GV5121195A", "service_data": {}, "manufacturer_data": {"0xef88": "59940000f0b91937ae50b6372c866ac2f3d061e717c00000"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:518"},
    {"address": "D2:32:39:37:56:34", "name": "D2:32:39:37:56:34", "service_data": {}, "manufacturer_data": {"0xef88": "f30a0024aaeaa5631b810899e1c4e1409883fe225935c464"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:531"},
    {"address": "D2:32:39:37:56:34", "name": "D2:32:39:37:56:34", "service_data": {}, "manufacturer_data": {"0xef88": "fe7e0000094ca86a1af0d2bc44260bd5af344c0be5c7f10a"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:542"},
    {"address": "C1:37:37:32:0F:45", "name": "GV51225634", "service_data": {}, "manufacturer_data": {"0xec88": "0108f30ad232393756340105", "0xef88": "f30a0000648248e86020622588c02fd258cb3f1b8544d930"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:555"},
    {"address": "C1:37:37:32:0F:45", "name": "GV51230B3D", "service_data": {}, "manufacturer_data": {"0xef88": "3dec0000de4377d55e55f991496e36bdc67f8b2c27067497"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:569"},
    {"address": "C1:37:37:32:0F:45", "name": "GV51230B3D", "service_data": {}, "manufacturer_data": {"0xef88": "3dec000159db6bd9bed7aff72a26aa4bd72dfa94573e5be9"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:582"},
    {"address": "D3:32:39:37:2F:68", "name": "GV51242F68", "service_data": {}, "manufacturer_data": {"0xef88": "08a2000125c25957fd7a750ef234a218bb15467c5b737b04"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:595"},
    {"address": "D3:32:39:37:2F:68", "name": "GV51242F68", "service_data": {}, "manufacturer_data": {"0xef88": "08a200135e53736fae439a55cfd8021bdfd5de643b2bd613"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:608"},
    {"address": "C1:37:37:32:0F:45", "name": "GV51255367", "service_data": {}, "manufacturer_data": {"0xec88": "010a2eafd930383553670101", "0xef88": "2eaf0000625cae9215b6a80ad4814bca4b5f73d945343002"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:621"},
    {"address": "C1:37:37:32:0F:45", "name": "GV51255367", "service_data": {}, "manufacturer_data": {"0xec88": "010a2eafd930383553670101", "0xef88": "2eaf0000fb0ec968d7056caf2af31be877f1e1e8e3a7f8c6"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:635"},
    {"address": "C1:37:37:32:0F:45", "name": "GV51260F45", "service_data": {}, "manufacturer_data": {"0xef88": "01c400016b98d35dcbbc1316c4c93f2bf92bec8659ce2040"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:649"},
    {"address": "C1:37:37:32:0F:45", "name": "GV51260F45", "service_data": {}, "manufacturer_data": {"0xef88": "01c40018d896d1ff10731f4c855ddf54f1e77fe88b0ec23f"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:662"},
    {"address": "D0:C9:07:1B:5E:3F", "name": "GVH51275E3F", "service_data": {}, "manufacturer_data": {"0x8803": "ec0001010111"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:675"},
    {"address": "D0:C9:07:1B:5E:3F", "name": "GVH51275E3F", "service_data": {}, "manufacturer_data": {"0x8803": "ec0001010101"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:686"},
    {"address": "D0:C9:07:1B:5E:3F", "name": "GVH51275E3F", "service_data": {}, "manufacturer_data": {"0x8803": "ec0001010000"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:697"},
    {"address": "D0:C9:07:1B:5E:3F", "name": "GVH5127969935", "service_data": {}, "manufacturer_data": {"0x8843": "ec0002010101"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:710"},
    {"address": "D3:21:C6:06:74:79", "name": "GV51307479", "service_data": {}, "manufacturer_data": {"0xef88": "4775009b24ecdd986aa7bdda57ff4583cd3d3973e802e24e", "0xec88": "010d4775d321c6067479010e"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:721"},
    {"address": "D3:21:C6:06:74:79", "name": "GV51307479", "service_data": {}, "manufacturer_data": {"0xef88": "477500ae6750fa3447445146492085c27610ea02b3a0063f"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:735"},
    {"address": "D3:21:C6:06:74:79", "name": "GV51307479", "service_data": {}, "manufacturer_data": {"0xef88": "477500d6a6a51019ce84013004eed9b6b9ebe156e8b4d0c1"}, "service_uuids": [], "key": None, "source": "govee-ble tests/test_parser.py:748"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5177_2EC8", "service_data": {}, "manufacturer_data": {"0x0001": "0101033626644c000215494e54454c4c495f524f434b535f48575177f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:761"},
    {"address": "A4:C1:38:75:2B:C8", "name": "B51782BC8", "service_data": {}, "manufacturer_data": {"0x0001": "010101002af7640003", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:774"},
    {"address": "A4:C1:38:75:2B:C8", "name": "B51782BC8", "service_data": {}, "manufacturer_data": {"0x0001": "0101010003e7e40001", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:788"},
    {"address": "A4:C1:38:75:2B:C8", "name": "B51782BC8", "service_data": {}, "manufacturer_data": {"0x0001": "010100002af7640003", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:802"},
    {"address": "A4:C1:38:75:2B:C8", "name": "B51782BC8", "service_data": {}, "manufacturer_data": {"0x0001": "010107002af7640003", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:816"},
    {"address": "A4:C1:38:75:2B:C8", "name": "Govee_1234", "service_data": {}, "manufacturer_data": {"0x0001": "010101002af7640003", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:832"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5179_3CD5", "service_data": {}, "manufacturer_data": {"0x8801": "ec0001010a0aa40664"}, "service_uuids": ["0000180a-0000-1000-8000-00805f9b34fb", "0000fef5-0000-1000-8000-00805f9b34fb", "0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:846"},
    {"address": "D1:06:03:06:63:19", "name": "GV5179_6319", "service_data": {}, "manufacturer_data": {"0x0001": "010103b31464", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:861"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5181_2EC8", "service_data": {}, "manufacturer_data": {"0x388a": "d801000101e4018608981d1000004c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008151-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:875"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5181_2EC8", "service_data": {}, "manufacturer_data": {"0xea42": "ba01000101640006ffff1ce80000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008151-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:889"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5181_2EC8", "service_data": {}, "manufacturer_data": {"0xea42": "ba010001016400860a281ce80000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008151-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:903"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVPROBE", "service_data": {}, "manufacturer_data": {"0xf861": "2601000101e40106ffff1cd40000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008151-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:917"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0xaaa2": "c101000101e4018608981aae0000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008151-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:931"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0xd14b": "6901000101e40186076c201c0000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008151-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:945"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "F34DC3CB-9CCF-336F-3CB1-3C6F525509E6", "service_data": {}, "manufacturer_data": {"0x2730": "6301000101e40101ffff120301ffff00004c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008251-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:959"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5183_2EC8", "service_data": {}, "manufacturer_data": {"0x67dd": "ef01000101e401800834ffff00004c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008351-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:973"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0xe02f": "cb01000101e4008f0834ffff0000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008351-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:987"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0xf79f": "7301000101e400800af0ffff0000", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008351-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1001"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5184_XXXX", "service_data": {}, "manufacturer_data": {"0x1b36": "2001000101e401860c1cffff860af0ffff", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008451-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1015"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5184_XXXX", "service_data": {}, "manufacturer_data": {"0x1b36": "2001000101e402860bb8ffff860b54ffff", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008451-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1029"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5184_XXXX", "service_data": {}, "manufacturer_data": {"0x1b36": "2001000101e4ff860c1cffff860af0ffff", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008451-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1043"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5185_2EC8", "service_data": {}, "manufacturer_data": {"0x4a32": "8701000101e4c1660834ffffffff0834ffffffff4c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008551-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1057"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5185_VAR2", "service_data": {}, "manufacturer_data": {"0x0332": "5401000101e4c16609c4ffffffff09c4ffffffff", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00008551-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1071"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5185_4C17", "service_data": {}, "manufacturer_data": {"0x4c32": "1701000101d70166ffffffffffffffffffffffff", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb", "02f00000-0000-0000-0000-00000000fe00", "494e5445-4c4c-495f-524f-434b535f4857"], "key": None, "source": "govee-ble tests/test_parser.py:1085"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5191_AC3D", "service_data": {}, "manufacturer_data": {"0xac63": "83010001014c5d040fa01324ffff0af0ffffffff"}, "service_uuids": ["00009151-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1104"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0x3022": "6c01000101a4c20f0e10ffffffff08fcffffffff"}, "service_uuids": ["00009851-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1117"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0x3022": "6c01000101a3c10f0bb8ffffffff0960ffffffff"}, "service_uuids": ["00009851-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1130"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "", "service_data": {}, "manufacturer_data": {"0x3022": "6c01000101a3d40f0bb8ffffffff0960ffffffff"}, "service_uuids": ["00009851-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1143"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GV5112AC3D", "service_data": {}, "manufacturer_data": {"0x0001": "0101033d70640041"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1155"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GV5112AC3D", "service_data": {}, "manufacturer_data": {"0x0001": "0101034928640082"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1165"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GV5112AC3D", "service_data": {}, "manufacturer_data": {"0x0001": "0101034928640099"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1175"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GV5112AC3D", "service_data": {}, "manufacturer_data": {"0x0001": "0101034928e40041"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1185"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GV5112AC3D", "service_data": {}, "manufacturer_data": {"0x0001": "0101034928e40082"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:1195"},
    {"address": "D4:0E:86:06:4A:33", "name": "GVH5110_4A33", "service_data": {}, "manufacturer_data": {"0x0001": "010182f7fd64", "0x004c": "0215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": ["0000ec88-0000-1000-8000-00805f9b34fb"], "key": None, "source": "govee-ble tests/test_parser.py:3250"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5055", "service_data": {}, "manufacturer_data": {"0x04cf": "0400461b061700ffff2c01067300ffff2c010000"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:525 (H5055)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5055", "service_data": {}, "manufacturer_data": {"0x04cf": "040061bf065c00ffff2c01063700ffff2c010000"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:527 (H5055)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5075_1234", "service_data": {}, "manufacturer_data": {"0xec88": "000418ee6400"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:529 (H5075)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5075_1234", "service_data": {}, "manufacturer_data": {"0xec88": "00811f096400"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:530 (H5075)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5072_1234", "service_data": {}, "manufacturer_data": {"0xec88": "0004344b6400"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:531 (H5072)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5102_1234", "service_data": {}, "manufacturer_data": {"0x0001": "010103590e64"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:532 (H5102)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5174_1234", "service_data": {}, "manufacturer_data": {"0x0001": "0101035e1364"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:581 (H5174)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5174_1234", "service_data": {}, "manufacturer_data": {"0x0001": "0101811a6764"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:582 (H5174)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5074_1234", "service_data": {}, "manufacturer_data": {"0xec88": "00c408231d6402"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:583 (H5074)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5074_1234", "service_data": {}, "manufacturer_data": {"0xec88": "00a0facc176402"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:584 (H5074)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5074_1234", "service_data": {}, "manufacturer_data": {"0xec88": "001b0a9b196402"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:585 (H5074)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5055", "service_data": {}, "manufacturer_data": {"0x0459": "5b006401201c00ffffffff20ffffffffffff0000"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:588 (H5055)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5055", "service_data": {}, "manufacturer_data": {"0x0459": "5b00640220ffffffffffff201f00ffffffff0000"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:589 (H5055)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5055", "service_data": {}, "manufacturer_data": {"0x0459": "5b00646020ffffffffffff201e00ffffffff0000"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:590 (H5055)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5055", "service_data": {}, "manufacturer_data": {"0x0459": "5b0064a020ffffffffffff202100ffffffff0000"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:591 (H5055)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "01010ed2e431"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:592 (H5106)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "01010deeaa6f"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:593 (H5106)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "01010ddf25cc"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:594 (H5106)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "01010069fcd3"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:595 (H5106)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "0101848420c0"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:596 (H5106)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "010181aa77cf"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:597 (H5106)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "010185e12c39"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:598 (H5106)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5106_1234", "service_data": {}, "manufacturer_data": {"0x0001": "01010d915f9a4c000215494e54454c4c495f524f434b535f48575075f2ff0c"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:611 (H5106 extended)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5075_1234", "service_data": {}, "manufacturer_data": {"0xec88": "000384e45c004c000215494e54454c4c495f524f434b535f48575075f2ffc2"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:612 (H5075 extended)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5104_1234", "service_data": {}, "manufacturer_data": {"0x0001": "010103f99e64"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:619 (H5104)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "Govee_H5179_1234", "service_data": {}, "manufacturer_data": {"0x8801": "ec000101ee07581641"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:620 (H5179)"},
    {"address": "AA:BB:CC:DD:EE:FF", "name": "GVH5105_1234", "service_data": {}, "manufacturer_data": {"0x0001": "010103787664"}, "service_uuids": [], "key": None, "source": "theengs/decoder tests/BLE/test_ble.cpp:651 (H5105)"},
]


def _packed(t10, h10, battery=100, error=False):
    """The packed 3-byte temperature/humidity and the battery byte."""
    raw = abs(t10) * 1000 + h10
    if t10 < 0:
        raw |= 0x800000
    return raw.to_bytes(3, "big").hex() + f"{battery | (0x80 if error else 0):02x}"


def _le(t100, h100, battery):
    return (t100 & 0xFFFF).to_bytes(2, "little").hex() + h100.to_bytes(2, "little").hex() + f"{battery:02x}"


def frames():
    out = list(CAPTURED)
    uuid5550 = ["00005550-0000-1000-8000-00805f9b34fb"]
    for t10, h10, b, err in [(-400, 0, 100, False), (-401, 0, 100, False), (1000, 999, 1, False), (1001, 0, 50, False),
                             (0, 0, 0, False), (-1, 1, 100, False), (-73, 481, 100, False), (215, 455, 87, True),
                             (8388, 607, 127, False)]:
        out.append(_frame("GVH5075_0001", {0xEC88: "00" + _packed(t10, h10, b, err) + "00"}))
        out.append(_frame("GVH5102_0001", {0x0001: "0101" + _packed(t10, h10, b, err)}))
        out.append(_frame(None, {0xEC88: "00" + _packed(t10, h10, b, err) + "00"}))
    for t100, h100, b in [(-4000, 0, 100), (-1, 9999, 5), (12500, 10000, 255), (-32768, 65535, 0), (2134, 4521, 64)]:
        out.append(_frame("Govee_H5074_0001", {0xEC88: "00" + _le(t100, h100, b) + "02"}))
        out.append(_frame("Govee_H5179_0001", {0x8801: "ec000101" + _le(t100, h100, b)}))
        out.append(_frame(None, {0xEC88: "00" + _le(t100, h100, b) + "020101"}))
    for ids in (0x01, 0x03, 0x00, 0x44, 0x48, 0x4C, 0x90, 0xA0, 0xB0, 0xC3):
        out.append(_frame("", {0xAF2F: f"550064{ids:02x}20" + "f6ff" + "ffffffff20" + "2c01" + "ffffffff0000"}, uuid5550))
    # The H5055 frames of Theengs Decoder's tests, with the service UUID they advertise.
    for f in CAPTURED:
        if f["name"] == "GVH5055":
            out.append(dict(f, service_uuids=uuid5550, source=f["source"] + " + uuid 5550"))
    # 0x0001 frames whose name is not a Govee's (the other families' frames are in the unit tests:
    # the driver counts a frame decoded by any of our families as decoded).
    out += [
        _frame(None, {0x0001: "010103590e64"}), _frame("RZSS", {0x0001: "010103590e64"}),
    ]
    return out


_SCOPE = {"H5072", "H5075", "H5129", "H5072/H5075", "H5074", "H5051", "H5052", "H5071", "H5100", "H5101", "H5102",
          "H5103", "H5104", "H5105", "H5108", "H5110", "H5174", "H5177", "H5179", "GV5179", "H5055"}


def reference(frame):
    if frame.get("source") in WE_REFUSE:
        return None
    from bluetooth_sensor_state_data import BluetoothServiceInfo
    from govee_ble.parser import GoveeBluetoothDeviceData

    info = BluetoothServiceInfo(name=frame.get("name") or "", address=frame["address"], rssi=-60,
                                manufacturer_data=_md(frame), service_uuids=_uuids(frame), service_data={},
                                source="local")
    data = GoveeBluetoothDeviceData()
    update = data.update(info)
    model = data.device_type
    if model not in _SCOPE:
        return None
    values = _values(update, ("temperature_alarm_probe_", "low_temperature_alarm_probe_"))
    if not values:
        return None
    if model == "GV5179":
        model = "H5179"
    return {"values": values, "model": None if "/" in model else model}
