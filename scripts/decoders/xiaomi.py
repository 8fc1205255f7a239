"""Differential-check adapter for the `xiaomi` family (MiBeacon, service data fe95).

Reference: Home Assistant's xiaomi-ble (PyPI), pinned below. Frames: every fe95 frame of
xiaomi-ble's test suite (tests/test_parser.py, as data: test name, address, bytes, key), plus
generated frames: edge values (negative temperatures, full ranges), v4/v5 frames encrypted
here with AES-CCM and a known key, v2/v3 frames encrypted with the legacy scheme (12-byte key),
each also with the wrong key, with no key, and a replayed one; 8-bit frame counters that wrap.

reference() maps xiaomi-ble's reading to our value names. Two deliberate differences of
xiaomi-ble, not of the format, are taken out here (see the notes of the family):
- `voltage`: xiaomi-ble derives a voltage from the battery percentage (object 0x100A); the
  frame carries no voltage, so it is not a reading (SPEC §13: absent, never made up);
- humidity of LYWSD03MMC and MHO-C401 (object 0x1006): xiaomi-ble floors it to a whole percent
  (a display choice against "stair stepping"); the object is uint16 x 0.1 %, so the adapter
  runs xiaomi-ble's own object reader without that model switch;
- the body temperature of MMC-T201-1 (object 0x2000): xiaomi-ble computes it from the frame's
  two raw thermistor readings with an empirical fit ("approximation based on values in the
  app"); the frame carries no body temperature, so ours publishes only the battery of 0x2000.
Values of kinds our names do not have (signal strength, events, light, smoke, ...) are left out;
a frame with no value left is None, as ours (nil: no reading).
"""

from __future__ import annotations

REQUIRES = ["xiaomi-ble==1.21.2"]

SERVICE = "0000fe95-0000-1000-8000-00805f9b34fb"

# (source test, address, service data fe95, bindkey) from xiaomi-ble's tests/test_parser.py.
CAPTURED = [
    ("test_blank_advertisements_then_encrypted", "A4:C1:38:D4:3C:48", "58585b0501483cd438c1a49cf255cfdd0000002fae2ff2", None),
    ("test_blank_advertisements_then_unencrypted", "C4:7C:8D:6B:4F:F3", "7120980012f34f6b8d7cc40d041002c400", None),
    ("test_encryption_needs_v2", "F8:24:41:C5:98:8B", "5830b603d28b98c54124f8c3491476757e00000099", None),
    ("test_encryption_needs_v5", "5A:58:2D:34:12:5F", "5858480b685f12342d585a0b1841e2aa000e00a4964fb5", None),
    ("test_bindkey_wrong", "54:EF:44:E0:C4:0F", "58598d0a170fc4e044ef547cc27a5c03a1000000790df258", "814aac74c4f17b6c1581e1ab87816b99"),
    ("test_bindkey_verified_can_be_unset_v4", "54:EF:44:E0:C4:0F", "58598d0a180fc4e044ef547cc27a5c03a100000079", "814aac74c4f17b6c1581e1ab87816b99"),
    ("test_bindkey_wrong_legacy", "F8:24:41:C5:98:8B", "5830b603d28b98c54124f8c3491476757e00000099", "b853075158487aa39a5b5ea9"),
    ("test_bindkey_verified_can_be_unset_legacy", "F8:24:41:C5:98:8B", "5830b603d38b98c54124f8c3491476757e00000099", "b853075158487aa39a5b5ea9"),
    ("test_Xiaomi_unknown_device_logs_product_id", "58:2D:34:3B:2E:BF", "5020ffffa3bf2e3b342d580d1004b40095020a10013b", None),
    ("test_Xiaomi_LYWSDCGQ", "58:2D:34:3B:2E:BF", "5020aa01a3bf2e3b342d580d1004b40095020a10013b", None),
    ("test_Xiaomi_CGG1", "5A:58:2D:34:12:5F", "5858480b685f12342d585a0b1841e2aa000e00a4964fb5", "814aac74c4f17b6c1581e1ab87816b99"),
    ("test_Xiaomi_CGDK2", "58:2D:34:12:20:89", "58586f0607892012342d585f176dd54f0200002fa453fa", "a3bfe9853dd85a620debe3620caaa351"),
    ("test_Xiaomi_CGDK3", "58:2D:34:87:94:0C", "4858594fef546f0e7450729321010038d74333", "872ea1bb02ba9713e885cb054c537368"),
    ("test_Xiaomi_LYWSD03MMC", "A4:C1:38:B4:94:4C", "50305b05034c94b438c1a40d10041001ea01", None),
    ("test_Xiaomi_LYWSD02MMC", "A4:C1:38:56:53:84", "5858e4162c84535638c1a42b6ef2e91200006c884d9e", "a115210eed7a88e50ad52662e732a9fb"),
    ("test_Xiaomi_LYWSD02MMC_v2_temperature", "A4:C1:38:0E:FD:78", "4858422529202d8c7a76b756a82a0078b8224e", "19b1c678ab0a8bc3dc77765f059188d4"),
    ("test_Xiaomi_LYWSD02MMC_v2_humidity", "A4:C1:38:0E:FD:78", "585842258878fd0e38c1a405f6538aa72a0062b1a966", "19b1c678ab0a8bc3dc77765f059188d4"),
    ("test_Xiaomi_LYWSD03MMC_encrypted", "A4:C1:38:02:83:F4", "58585b0550f4830238c1a495ef58763c26000097e2abb5", "e9ea895fac7cca6d30532432a516f3a8"),
    ("test_Xiaomi_XMWSDJ04MMC", "2C:11:65:25:70:04", "48590312a41b776e7c96add7000000f2bf545b", "b2cf9a553d53571b5657defd582d676e"),
    ("test_Xiaomi_XMMF01JQD", "E2:53:30:E6:D3:54", "5030e1048e54d3e63053e2011003010000", None),
    ("test_Xiaomi_JTYJGD03MI_smoke", "54:EF:44:E3:9C:BC", "5859970966bc9ce344ef5401081205000000715ebe90", "5b51a7c91cde6707c9ef18dfda143a58"),
    ("test_Xiaomi_JTYJGD03MI_press", "54:EF:44:E3:9C:BC", "5859970964bc9ce344ef5422206088fd000000003a148fb3", "5b51a7c91cde6707c9ef18dfda143a58"),
    ("test_Xiaomi_HHCCJCY01_all_values", "C4:7C:8D:6A:3E:7A", "71209800667a3e6a8d7cc40d071003000000", None),
    ("test_Xiaomi_HHCCJCY01_all_values", "C4:7C:8D:6A:3E:7A", "71209800687a3e6a8d7cc40d0910025702", None),
    ("test_Xiaomi_HHCCJCY01_all_values", "C4:7C:8D:6A:3E:7A", "71209800477a3e6a8d7cc40d08100140", None),
    ("test_Xiaomi_HHCCJCY01_all_values", "C4:7C:8D:6A:3E:7A", "71209800697a3e6a8d7cc40d041002f400", None),
    ("test_Xiaomi_GCLS002", "C4:7C:8D:6D:59:3E", "7120bc03cd3e596d8d7cc40d0410023c01", None),
    ("test_Xiaomi_MCCGQ02HL", "E4:AA:EC:81:21:AE", "58588b09a3ae2181ecaae40e2c553c040000d28a500c", "017e52d2684779298709b117c0a75a7b"),
    ("test_Xiaomi_CGH1", "A4:C1:38:0A:03:D6", "5040d60301d6030a38c1a419100100", None),
    ("test_Xiaomi_SJWS01LM", "A4:C1:38:08:63:01", "504063080101630838c1a4011003000000", None),
    ("test_Xiaomi_MJWSD06MMC_temperature", "A4:C1:38:80:15:07", "4859b5553a8699bda053448f1200005b046d6a", "4d8f1373fb4d3bab557d0ebd1c78f8c4"),
    ("test_Xiaomi_MJWSD06MMC_humidity", "A4:C1:38:80:15:07", "5859b5553407158038c1a4bcc732980e000066960f10", "4d8f1373fb4d3bab557d0ebd1c78f8c4"),
    ("test_Xiaomi_MJWSD06MMC_new_hw_revision", "A4:C1:38:80:15:07", "4859ea5b3ae4da12e2b1fbf512000042b29f50", "4d8f1373fb4d3bab557d0ebd1c78f8c4"),
    ("test_Xiaomi_ESM787_discovery", "A4:C1:38:02:F8:F4", "1059db780df4f80238c1a4", None),
    ("test_Xiaomi_ESM787_temperature_humidity", "A4:C1:38:02:F8:F4", "5059db780df4f80238c1a40d1004eb00e701", None),
    ("test_Xiaomi_MJYD02YL", "A4:C1:38:07:F6:01", "5040f6070101f60738c1a40f0003640000", None),
    ("test_Xiaomi_MUE4094RT", "DE:70:E8:B2:39:0C", "4030dd032403000101", None),
    ("test_Xiaomi_CGPR1", "A4:C1:38:0A:00:83", "5040830a0183000a38c1a40f0003640000", None),
    ("test_Xiaomi_MMC_T201_1", "00:81:F9:DD:6F:C1", "7022db006fc16fddf9810009002005c60d630d51", None),
    ("test_Xiaomi_MMC_W505", "D0:24:18:53:AB:DB", "702291030fdbab531824d0090a0002750d07", None),
    ("test_Xiaomi_M1S_T500", "E6:71:43:17:5B:11", "7130890437115b174371e6091000020003", None),
    ("test_Xiaomi_T700", "ED:DE:34:3F:48:0C", "48580608c9480ef11281079733fc1400005644db41", "1330b99cded13258acc391627e9771f7"),
    ("test_Xiaomi_ZNMS16LM_fingerprint", "D7:1F:44:EB:8A:91", "50449e0642918aeb441fd7060005ffffffff00", None),
    ("test_Xiaomi_ZNMS16LM_fingerprint_low_quality", "D7:1F:44:EB:8A:91", "50449e0642918aeb441fd70600050000000003", None),
    ("test_Xiaomi_ZNMS16LM_lock", "D7:1F:44:EB:8A:91", "50449e0643918aeb441fd70b000920020001807c442f61", None),
    ("test_Xiaomi_Lockin_SV40_lock", "98:0C:33:A3:04:3D", "4855c211165068b6fe3c878095c8a5834f000000463221c6", "54d84797cb77f9538b224b305c877d1e"),
    ("test_Xiaomi_Lockin_SV40_door", "98:0C:33:A3:04:3D", "4855c211144e28703276fccd3d00000080e72280", "54d84797cb77f9538b224b305c877d1e"),
    ("test_Xiaomi_YLAI003", "A4:C1:38:07:BF:01", "5040bf070101bf0738c1a4011003000000", None),
    ("test_Xiaomi_YLYK01YL", "F8:24:41:E9:50:74", "503053013f7450e94124f8011003000000", None),
    ("test_Xiaomi_YLKG07YL_press", "F8:24:41:C5:98:8B", "5830b603d28b98c54124f8c3491476757e00000099", "b853075158487ca39a5b5ea9"),
    ("test_Xiaomi_YLKG07YL_rotate", "F8:24:41:C5:98:8B", "5830b603368b98c54124f88bb8f2661351000000d6", "b853075158487ca39a5b5ea9"),
    ("test_Xiaomi_K9B", "A4:C1:38:15:68:01", "5040fd0d0101fd0d38c1a4011003060001", None),
    ("test_Xiaomi_K9B", "A4:C1:38:15:69:01", "5040fd0d0101fd0d38c1a4011003060001", None),
    ("test_Xiaomi_K9B", "A4:C1:38:0D:FD:01", "5040fd0d0101fd0d38c1a4011003060001", None),
    ("test_Xiaomi_HS1BB_MI_obj4803", "A4:C1:38:05:8E:E9", "5859eb2a9ee98e0538c1a4d07ad3e338000033635d10", "7475a4a77584401780ffc3ee62dd353c"),
    ("test_Xiaomi_HS1BB_MI_obj4818", "A4:C1:38:05:8E:E9", "5859eb2ac1e98e0538c1a40759530f8d380000b77a70f8", "7475a4a77584401780ffc3ee62dd353c"),
    ("test_Xiaomi_MS1BB_MI_obj4a08", "A4:C1:38:05:8E:E9", "4859eb2ac2fce02ca0b43af2380000a2d9f05f", "7475a4a77584401780ffc3ee62dd353c"),
    ("test_Xiaomi_MS1BB_MI_obj4804", "A4:C1:38:66:E5:67", "585989189a67e56638c1a49dd97af3260000c8a60bd5", "0fdcc30fe9289254876b5ef7c11ef1f0"),
    ("test_Xiaomi_MS1BB_MI_obj4a12", "A4:C1:38:66:E5:67", "585989187567e56638c1a469ddf3a1260000a24a1b45", "0fdcc30fe9289254876b5ef7c11ef1f0"),
    ("test_Xiaomi_MS1BB_MI_obj4a1a", "A4:C1:38:66:E5:67", "505989180167e56638c1a41a4a0101", None),
    ("test_Xiaomi_MS1BB_MI_obj4a13", "A4:C1:38:66:E5:67", "585989189167e56638c1a4d6120d6d2600006fbc0cb4", "0fdcc30fe9289254876b5ef7c11ef1f0"),
    ("test_Xiaomi_RS1BB_MI_obj4806", "A4:C1:38:B9:4C:67", "58590f3f4a674cb938c1a4d6e57b83040000d01e0b4b", "33ede53321bc73c790a8daae4581f3d5"),
    ("test_Xiaomi_XMWXKG01YL", "DC:ED:83:87:12:73", "585949194f73128783eddc0b34380a0200008d49ae28", "b93eb3787eabda352edd94b667f5d5a9"),
    ("test_Xiaomi_XMZNMS08LM_door", "EE:89:73:44:BE:98", "4855390e339c71c0241fffee8053000002b4c539", "2c3795afa33019a8afdc17ba99e6f217"),
    ("test_Xiaomi_XMZNMS08LM_lock", "EE:89:73:44:BE:98", "4855390e2fdf9d3fdd9a6637131529f87b530000bcc34021", "2c3795afa33019a8afdc17ba99e6f217"),
    ("test_Xiaomi_DSL_C08", "A4:C1:38:0A:03:80", "504080030180030a38c1a408000100", None),
    ("test_Xiaomi_RTCGQ02LM_light_and_motion", "18:C2:3C:20:8E:77", "58598d0a8c778e203cc2185a273628ec32060000c4264015", "4960bb9f8711b4ffd7df1756d11427ae"),
    ("test_Xiaomi_RTCGQ02LM_timeout_motion", "18:C2:3C:20:8E:77", "48598d0a927953750fed0f990600005cad2c29", "4960bb9f8711b4ffd7df1756d11427ae"),
    ("test_Xiaomi_XMPIRO2SXS", "DC:8E:95:2D:EA:43", "485931350b64799117331ef4020000c5d2f6ac", "685d647dc5e7bc9bcfcf5a1357bd2114"),
    ("test_Xiaomi_XMOSB01XS_ILLUMINANCE", "0C:43:14:A1:41:1E", "485983460ddc213ce981da7ae202004441f88c", "0a4552cb19a639b72b8ed09bde6d5bfa"),
    ("test_Xiaomi_XMOSB01XS_OCCUPANCY", "D4:48:67:C4:B1:BD", "585983461fbdb1c46748d49d1efd8c040000e57e873a", "920ce119b34410d38251ccea54c0f915"),
    ("test_Xiaomi_PTX_press", "A4:C1:38:A5:B9:AD", "5859bb3804adb9a538c1a4dc10b50400002c122fb6", "a74510b40386d35ae6227a7451efc76e"),
    ("test_Xiaomi_XMWXKG01LM_press", "18:C2:3C:24:37:05", "58598723350537243cc218d67794020000cb2de309", "7202a2d4201bbf82ea5bb3705657c32a"),
    ("test_Xiaomi_Scale_S200_MJTZC02YM", "D0:7B:6F:27:D7:29", "4859044c019a80a275939010f0abc4fadc0600003d29c044", "653b1b10e1cb35e4ac5e60fa45f3bf29"),
    ("test_Xiaomi_Scale_S400_MJTZC01YM", "8C:D0:B2:F6:BE:EF", "4859d53b0abc078ff2348c844138e930220000009e538599", "0728974d657a4b60964c1b1677f35f7c"),
    ("test_Xiaomi_Scale_S400_MJTZC01YM_packet_2", "8C:D0:B2:F6:BE:EF", "4859d53b0bd6ef0b25db72785e7e2f46d6000000d8642df6", "0728974d657a4b60964c1b1677f35f7c"),
    ("test_Xiaomi_XMWS01XS_press", "08:B9:5F:20:6E:11", "5859685952116e205fb9083026548d020000ce31cfc3", "59ba8eef0f5351bb09d6896762d5afa5"),
    ("test_Xiaomi_Scale_S400_MJTZC01YM_socks", "04:AE:47:67:C6:7C", "4859d53b71530438b5894b242c209908da000000479ecda3", "02d2900363ef629c736a4549677acbee"),
    ("test_Xiaomi_Scale_S400_MJTZC01YM_reset", "04:AE:47:67:C6:7C", "4859d53b72036c6794355a19dbc864bfb3000000e4151dc8", "02d2900363ef629c736a4549677acbee"),
    ("test_Xiaomi_XMWS01XS_double_press", "08:B9:5F:20:6E:11", "5859685951116e205fb908d91bd58502000007cca849", "59ba8eef0f5351bb09d6896762d5afa5"),
    ("test_Xiaomi_XMWS01XS_long_press", "08:B9:5F:20:6E:11", "5859685953116e205fb908f3785181020000eac183f4", "59ba8eef0f5351bb09d6896762d5afa5"),
    ("test_Xiaomi_ES3_illuminance", "A4:C1:38:C7:C3:76", "4859fb50d986d27e8f5313e900000030ad6da8", "b26295a7a08fbac306c8706ade7f0fe4"),
    ("test_Xiaomi_ES3_occupancy_on", "A4:C1:38:C7:C3:76", "5859fb50da76c3c738c1a4aabc4c16000000c60c1646", "b26295a7a08fbac306c8706ade7f0fe4"),
    ("test_Xiaomi_ES3_occupancy_off", "A4:C1:38:A4:88:8A", "5859fb50328a88a438c1a4458a85b796000048fe13ba", "fb352ea2139ab095877a9e2ae600c912"),
    ("test_Xiaomi_KS2_button_press", "A4:C1:38:A1:FE:E6", "58590b52b4e6fea138c1a4308fa80900000de1ebdb", "8bdff7d0f70fa7f5c68f42157b5fd65b"),
    ("test_Xiaomi_KS2_temperature", "A4:C1:38:A1:FE:E6", "48590b52b3c1b85c50f35c570900004a9ed6b8", "8bdff7d0f70fa7f5c68f42157b5fd65b"),
    ("test_Xiaomi_KS2_humidity", "A4:C1:38:A1:FE:E6", "58590b526ce6fea138c1a4430540670b00004c4445f1", "8bdff7d0f70fa7f5c68f42157b5fd65b"),]

KEY16 = bytes.fromhex("e9ea895fac7cca6d30532432a516f3a8")
WRONG16 = bytes.fromhex("00112233445566778899aabbccddeeff")
KEY12 = bytes.fromhex("b853075158487ca39a5b5ea9")
WRONG12 = bytes.fromhex("b853075158487aa39a5b5ea9")


def _mac(address: str) -> bytes:
    return bytes.fromhex(address.replace(":", ""))


def plain_frame(product: int, counter: int, objects: bytes, address: str, version: int = 5, mac: bool = True) -> bytes:
    """A plaintext MiBeacon (object included; MAC included when `mac`)."""
    control = (version << 12) | 0x0040 | (0x0010 if mac else 0)
    head = control.to_bytes(2, "little") + product.to_bytes(2, "little") + bytes([counter & 0xFF])
    return head + (_mac(address)[::-1] if mac else b"") + objects


def v5_frame(product: int, counter: int, objects: bytes, address: str, key: bytes, ext: int = 0, version: int = 5) -> bytes:
    """A MiBeacon v4/v5 frame encrypted with AES-CCM (nonce: MAC reversed, product, counter, ext)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESCCM

    control = (version << 12) | 0x0800 | 0x0040 | 0x0010 | 0x0008
    head = control.to_bytes(2, "little") + product.to_bytes(2, "little") + bytes([counter & 0xFF])
    mac = _mac(address)[::-1]
    ext_bytes = ext.to_bytes(3, "little")
    nonce = mac + head[2:5] + ext_bytes
    sealed = AESCCM(key, tag_length=4).encrypt(nonce, objects, b"\x11")
    return head + mac + sealed[:-4] + ext_bytes + sealed[-4:]


def legacy_frame(product: int, counter: int, objects: bytes, address: str, key12: bytes, version: int = 3) -> bytes:
    """A MiBeacon v2/v3 frame with the legacy encryption: AES-CCM with the 12-byte key expanded
    to 16, nonce = header (5) + 3 bytes + MAC reversed without its last byte, and the first byte
    of the 16-byte tag as the frame's last byte."""
    from cryptography.hazmat.primitives.ciphers.aead import AESCCM

    control = (version << 12) | 0x0040 | 0x0010 | 0x0008
    head = control.to_bytes(2, "little") + product.to_bytes(2, "little") + bytes([counter & 0xFF])
    mac = _mac(address)[::-1]
    key = key12[:6] + bytes.fromhex("8d3d3c97") + key12[6:]
    random3 = bytes([0x00, 0x00, 0x00])
    nonce = head + random3 + mac[:5]
    sealed = AESCCM(key, tag_length=16).encrypt(nonce, objects, b"\x11")
    return head + mac + sealed[:-16] + random3 + sealed[-16:-15]


def _obj(object_id: int, value: bytes) -> bytes:
    return object_id.to_bytes(2, "little") + bytes([len(value)]) + value


def generated():
    import struct

    out = []
    a = "A4:C1:38:11:22:33"
    lyw, flora, lywsdcgq, cgg1, jqj, cgh1 = 0x055B, 0x0098, 0x01AA, 0x0347, 0x02DF, 0x03D6
    # Edge values, plaintext.
    for t in (-40.0, -12.5, -0.1, 0.0, 23.4, 60.0):
        out.append(("edge temperature %s" % t, a, plain_frame(lywsdcgq, 1, _obj(0x1004, struct.pack("<h", round(t * 10))), a, 2), None))
    out.append(("edge temp+hum below zero", a, plain_frame(lywsdcgq, 2, _obj(0x100D, struct.pack("<hH", -215, 1000)), a, 2), None))
    for b in (0, 1, 100):
        out.append(("edge battery %d" % b, a, plain_frame(lywsdcgq, 3, _obj(0x100A, bytes([b])), a, 3), None))
    out.append(("edge humidity 0.0", a, plain_frame(lywsdcgq, 4, _obj(0x1006, struct.pack("<H", 0)), a, 3), None))
    out.append(("edge illuminance max", a, plain_frame(flora, 5, _obj(0x1007, b"\xff\xff\xff"), a, 2), None))
    out.append(("edge moisture 100", a, plain_frame(flora, 6, _obj(0x1008, b"\x64"), a, 2), None))
    out.append(("edge conductivity max", a, plain_frame(flora, 7, _obj(0x1009, b"\xff\xff"), a, 2), None))
    out.append(("edge formaldehyde", a, plain_frame(jqj, 8, _obj(0x1010, struct.pack("<H", 1234)), a, 3), None))
    out.append(("door open", a, plain_frame(cgh1, 9, _obj(0x1019, b"\x00"), a, 3), None))
    out.append(("door closed", a, plain_frame(cgh1, 10, _obj(0x1019, b"\x01"), a, 3), None))
    out.append(("no MAC in frame", a, plain_frame(lywsdcgq, 11, _obj(0x1004, struct.pack("<h", 215)), a, 3, mac=False), None))
    out.append(("v5 float temperature below zero", a, plain_frame(0x2832, 12, _obj(0x4C01, struct.pack("<f", -7.25)), a, 5), None))
    out.append(("v5 humidity byte", a, plain_frame(0x2832, 13, _obj(0x4C02, b"\x37"), a, 5), None))
    # Encrypted v4/v5: right key, wrong key, no key; an extended counter; the same frame again (a replay).
    objects = _obj(0x1004, struct.pack("<h", -53))
    right = v5_frame(lyw, 0x10, objects, a, KEY16, ext=0x000102)
    out.append(("v5 encrypted, right key", a, right, KEY16.hex()))
    out.append(("v5 encrypted, replayed", a, right, KEY16.hex()))
    out.append(("v5 encrypted, wrong key", a, right, WRONG16.hex()))
    out.append(("v5 encrypted, no key", a, right, None))
    out.append(("v4 encrypted, humidity", a, v5_frame(lyw, 0xFF, _obj(0x1006, struct.pack("<H", 456)), a, KEY16, ext=7, version=4), KEY16.hex()))
    out.append(("v5 encrypted, battery, counter wraps", a, v5_frame(lyw, 0x00, _obj(0x100A, b"\x5d"), a, KEY16, ext=8), KEY16.hex()))
    # Encrypted v2/v3 (12-byte key): right key, wrong key, no key, the 8-bit counter wrapping.
    for counter in (0xFE, 0xFF, 0x00, 0x01):
        out.append(("v3 legacy encrypted, counter %d" % counter, a,
                    legacy_frame(cgg1, counter, _obj(0x100D, struct.pack("<hH", -12, 555)), a, KEY12), KEY12.hex()))
    legacy = legacy_frame(cgg1, 0x42, _obj(0x1004, struct.pack("<h", 199)), a, KEY12)
    out.append(("v3 legacy encrypted, wrong key", a, legacy, WRONG12.hex()))
    out.append(("v3 legacy encrypted, no key", a, legacy, None))
    out.append(("v2 legacy encrypted", a, legacy_frame(cgg1, 0x43, _obj(0x100A, b"\x50"), a, KEY12, version=2), KEY12.hex()))
    return out


def frames():
    out = []
    for source, address, data, key in CAPTURED:
        out.append({"address": address, "name": None, "service_data": {"fe95": data}, "manufacturer_data": {},
                    "service_uuids": ["fe95"], "key": key, "source": "xiaomi-ble tests/test_parser.py::" + source})
    for source, address, data, key in generated():
        out.append({"address": address, "name": None, "service_data": {"fe95": data.hex()}, "manufacturer_data": {},
                    "service_uuids": ["fe95"], "key": key, "source": "generated: " + source})
    return out


_PATCHED = False


def _unfloor_humidity():
    """xiaomi-ble floors 0x1006 for two models; read it as the format says (see the docstring)."""
    global _PATCHED
    if _PATCHED:
        return
    from xiaomi_ble import parser

    original = parser.xiaomi_dataobject_dict[0x1006]

    def humidity(xobj, device, device_type):
        return original(xobj, device, "" if device_type in ("LYWSD03MMC", "MHO-C401") else device_type)

    parser.xiaomi_dataobject_dict[0x1006] = humidity
    _PATCHED = True


SENSORS = {"temperature", "humidity", "battery", "illuminance", "moisture", "conductivity", "formaldehyde"}
BINARY = {"opening": "opening", "motion": "motion", "battery": "battery_low"}


def reference(frame):
    from home_assistant_bluetooth import BluetoothServiceInfo
    from xiaomi_ble.parser import XiaomiBluetoothDeviceData

    _unfloor_humidity()
    data = frame["service_data"].get("fe95")
    if data is None:
        return None
    key = bytes.fromhex(frame["key"]) if frame.get("key") else None
    info = BluetoothServiceInfo(name=frame.get("name") or "", address=frame["address"], rssi=-60,
                                manufacturer_data={}, service_data={SERVICE: bytes.fromhex(data)},
                                service_uuids=[SERVICE], source="")
    try:
        update = XiaomiBluetoothDeviceData(bindkey=key).update(info)
    except Exception:  # the reference trapping on a frame is a refusal
        return None
    values = {}
    for device_key, value in update.entity_values.items():
        if device_key.key in SENSORS:
            values[device_key.key] = value.native_value
    for device_key, value in update.binary_entity_values.items():
        name = BINARY.get(device_key.key)
        if name:
            values[name] = bool(value.native_value)
    device = update.devices.get(None)
    if device and device.model == "MMC-T201-1":
        values.pop("temperature", None)
    if not values:
        return None
    return {"values": values, "model": device.model if device else None}


if __name__ == "__main__":
    import json

    for f in frames():
        print(json.dumps({"source": f["source"], "reference": reference(f)}))
