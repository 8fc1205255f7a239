"""Adapter for RuuviTag data formats 3 (RAWv1) and 5 (RAWv2), manufacturer data 0x0499, reference:
ruuvitag-ble (the driver's interface: see driver.py).

Frames: those of ruuvitag-ble's tests/test_v3.py and test_v5.py (and the indoor frame commented
out there), the examples of Ruuvi's format documents (dataformat_03.md, dataformat_05.md: valid,
maximum, minimum and "invalid" vectors), then generated ones with random readings and each
field's edges and not-available values.

reference(): RuuvitagBluetoothDeviceData.update() on the frame, mapped to our names and units:
voltage mV -> V; acceleration_total dropped (not a SPEC §13 value); None values absent. The
packet id is format 5's measurement sequence, read with the reference's DataFormat5Decoder.

Errata (the reference against Ruuvi's format document, applied here, each noted in the report):
  - format 5 movement counter 255 is "not available" (dataformat_05.md); the reference reports
    255: absent here, as in ours;
  - format 5 measurement sequence 65535 is "not available": no packet id.
TOLERANCE: the reference rounds temperature, humidity (2 decimals) and the accelerations
(2 decimals of m/s²); we publish the format's own resolution (0.005 °C, 0.0025 %, 1 mG).
"""
import random
import struct

REQUIRES = ["ruuvitag-ble==0.4.0"]
# TheengsDecoder 2.5.0 is compared on every value it gives. Its RuuviTag accelerations are ten
# times too small for the m/s² it names (the format's -1000 mG, -1 g = -9.80665 m/s², comes out as
# -0.980665: mG × 9.80665 / 10000), on every frame: compared × 10, which still checks the bytes
# and sign it reads. Its "mov" is Ruuvi's movement counter (format 5), not the motion boolean the
# key means elsewhere: compared with our movement_counter.
THEENGS_KEYS = {"accx": ("acceleration_x", 10), "accy": ("acceleration_y", 10), "accz": ("acceleration_z", 10),
                "mov": ("movement_counter", 1)}
TOLERANCE = {"temperature": 0.0051, "humidity": 0.0051, "acceleration_x": 0.0051, "acceleration_y": 0.0051,
             "acceleration_z": 0.0051}  # half the reference's last decimal, and float noise

_REAL = [
    ("03b20c1fca20007a002603d0088f", "ruuvitag-ble tests/test_v3.py V3_SENSOR_DATA"),
    ("03b28145ca20007a002603d0088f", "ruuvitag-ble tests/test_v3.py V3_SENSOR_DATA_SUBZERO"),
    ("0505a060a0c89afd34028cff006376726976dead7b3fefaf", "ruuvitag-ble tests/test_v5.py V5_OUTDOOR_SENSOR_DATA"),
    ("0505a060a0c89a8000028cff006376726976dead7b3fefaf", "ruuvitag-ble tests/test_v5.py V5_OUTDOOR_SENSOR_DATA_INVALID_ACCEL"),
    ("050ea44d7ec818fcbcfdf0ffb42bf600103cd9370ff7aa48", "ruuvitag-ble tests/test_v5.py INDOOR_SENSOR_DATA (commented out there)"),
    ("0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F", "Ruuvi dataformat_05.md valid data"),
    ("057FFFFFFEFFFE7FFF7FFF7FFFFFDEFEFFFECBB8334C884F", "Ruuvi dataformat_05.md maximum values"),
    ("058001000000008001800180010000000000CBB8334C884F", "Ruuvi dataformat_05.md minimum values"),
    ("058000FFFFFFFF800080008000FFFFFFFFFFFFFFFFFFFFFF", "Ruuvi dataformat_05.md invalid values"),
    ("03291A1ECE1EFC18F94202CA0B53", "Ruuvi dataformat_03.md valid data"),
    ("03FF7F63FFFF7FFF7FFF7FFFFFFF", "Ruuvi dataformat_03.md maximum values"),
    ("0300FF6300008001800180010000", "Ruuvi dataformat_03.md minimum values"),
]


def _frame(address, data, source):
    return {"address": address, "name": None, "service_data": {}, "manufacturer_data": {"0x0499": data.lower()},
            "service_uuids": [], "key": None, "source": source}


def frames():
    out = [_frame(f"C8:25:2D:8E:9C:{n:02X}", data, source) for n, (data, source) in enumerate(_REAL)]
    rng = random.Random(1177)
    for n in range(24):
        mac = bytes([0xD0, 0x1F, 0x3B, 0x00, 0x10, n])
        if n % 3 == 0:  # format 3
            temperature = rng.randint(-12799, 12799) if n else -4000
            sign, magnitude = (0x80 if temperature < 0 else 0), abs(temperature)
            data = struct.pack(">BBBBHhhhH", 3, rng.randint(0, 200), sign | magnitude // 100, magnitude % 100,
                               rng.randint(0, 65535), rng.randint(-2000, 2000), rng.randint(-2000, 2000),
                               rng.randint(-2000, 2000), rng.randint(1800, 3600))
        else:
            power = (rng.randint(0, 2046) << 5) | rng.randint(0, 31)
            data = struct.pack(">BhHHhhhHBH", 5, rng.randint(-32767, 32767), rng.randint(0, 40000),
                               rng.randint(0, 65534), rng.randint(-32767, 32767), rng.randint(-2000, 2000),
                               rng.randint(-2000, 2000), power, rng.randint(0, 254), rng.randint(0, 65534)) + mac
            if n == 4:
                data = data[:15] + b"\xff" + data[16:]  # movement counter not available
            if n == 5:
                data = data[:16] + b"\xff\xff" + data[18:]  # measurement sequence not available
            if n == 7:
                data = data[:1] + b"\x80\x00" + data[3:]  # temperature not available
        out.append(_frame(mac.hex(":").upper(), data.hex(), f"generated format {data[0]}"))
    return out


_NAMES = {"temperature": "temperature", "humidity": "humidity", "pressure": "pressure",
          "acceleration_x": "acceleration_x", "acceleration_y": "acceleration_y", "acceleration_z": "acceleration_z",
          "movement_counter": "movement_counter"}


def reference(frame):
    from home_assistant_bluetooth import BluetoothServiceInfo
    from ruuvitag_ble import RuuvitagBluetoothDeviceData
    from ruuvitag_ble.df5_decoder import DataFormat5Decoder

    data = bytes.fromhex((frame.get("manufacturer_data") or {}).get("0x0499", ""))
    info = BluetoothServiceInfo(name=frame.get("name") or "", address=frame["address"], rssi=-60,
                                manufacturer_data={0x0499: data}, service_data={}, service_uuids=[], source="")
    try:
        update = RuuvitagBluetoothDeviceData().update(info)
    except Exception:
        return None
    if not update.entity_values:
        return None
    values = {}
    for key, entity in update.entity_values.items():
        name = key.key
        if entity.native_value is None:
            continue
        if name == "voltage":
            values["voltage"] = entity.native_value / 1000
        elif name in _NAMES:
            values[_NAMES[name]] = entity.native_value
    result = {"values": values, "model": "RuuviTag", "manufacturer": "Ruuvi Innovations Ltd."}
    if data[:1] == b"\x05" and len(data) == 24:
        if data[15] == 0xFF:  # erratum: 255 is "not available"
            values.pop("movement_counter", None)
        sequence = DataFormat5Decoder(data).measurement_sequence_number
        if sequence != 0xFFFF:  # erratum: 65535 is "not available"
            result["packet_id"] = sequence
    return result
