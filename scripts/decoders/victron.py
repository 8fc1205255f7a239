"""Adapter for Victron Instant Readout (manufacturer data 0x02e1, AES-128-CTR with the device's
key as bindkey), reference: victron-ble (the driver's interface: see driver.py).

Frames:
  - victron-ble's end-to-end test frames with their keys (SmartShunt, SmartSolar / BlueSolar
    MPPT, Orion Smart DC-DC, Smart Battery Sense) and its key-mismatch frame;
  - its frames of record types this family does not decode (AC charger, DC energy meter,
    Multi RS, VE.Bus): the reference reads them, we refuse them (reference() gives None: out of
    this family's scope, counted as refused by both);
  - generated: victron-ble's decrypted test records (and random records) encrypted here with
    AES-CTR and random keys, at the record's own length and padded to 16 bytes; each also with
    a wrong key (another first byte: the reference raises its key mismatch, ours bad_mic), a
    wrong key with the same first byte (no MIC in the format: both decode the same noise), no
    key (both refuse), a key of the wrong length, and the same frame again (a replay: the
    runtime's replay guard drops it, the decoders both decode it).

reference(): victron_ble.devices.detect_device_type(data)(key).parse(data), its parsed record
mapped to our names: SolarCharger battery_voltage, battery_charging_current -> battery_current,
yield_today Wh -> kWh, solar_power; BatteryMonitor (and BatterySense) voltage ->
battery_voltage, current -> battery_current, soc -> state_of_charge, temperature_kelvin -> °C
temperature; DcDcConverter input_voltage -> voltage, output_voltage -> battery_voltage. Model:
ours per record type (Solar Charger, Battery Monitor, Smart Battery Sense for the reference's
BatterySense override, DC/DC Converter). counter and packet_id: the frame's data counter.

The reference's enums for fields we do not publish (alarm reason, operation mode, charger error,
off reason) raise on values they do not list (the alarm and off reasons are bit masks whose
combinations they cannot hold): they are read as plain integers here, so that the reference
refuses a frame only for what the format itself rejects.

Errata (the reference against Victron's "extra manufacturer data" document, noted in the report):
  - battery monitor current: a signed 22-bit field, "not available" = 0x1FFFFF (its largest
    positive value); the reference tests 0x3FFFFF, which a signed field never holds, and so
    reports 2097.151 A (e.g. its own Smart Battery Sense test frame): absent here, as in ours;
  - battery monitor aux input in temperature mode: 0xFFFF is "not available"; the reference
    reports 382.2 °C (its test_aux_temperature record): absent here, as in ours.
"""
import random

REQUIRES = ["victron-ble==0.9.3"]

_REAL = [
    ("100289a302b040af925d09a4d89aa0128bdef48c6298a9", "aff4d0995b7d1e176c0c33ecb9e70dcd", "test_battery_monitor.py::test_end_to_end_parse"),
    ("100289a302bb01af129087600b9b97bc2c32867c8238da", "ffffffffffffffffffffffffffffffff", "test_battery_monitor.py::test_key_mismatch"),
    ("100242a0016207adceb37b605d7e0ee21b24df5c", "adeccb947395801a4dd45a2eaa44bf17", "test_solar_charger.py::test_end_to_end_parse"),
    ("1000c0a304121d64ca8d442b90bbdf6a8cba", "64ba49f1a8562e45197a8e1fe50d7658", "test_dcdc_converter.py::test_end_to_end_parse"),
    ("1000a4a3025f150d8dcbff517f30eb65e76b22a04ac4e1", "0da694539597f9cf6c613cde60d7bf05", "test_battery_sense.py::test_end_to_end_parse"),
    ("100030a308f926c1b5170a0d2280335bf12d5ed083", "c129cf8f75c3fe5a1655b481e205fb7d", "test_ac_charger.py (record type not decoded here)"),
    ("100289a30d787fafde83ccec982199fd815286", "aff4d0995b7d1e176c0c33ecb9e70dcd", "test_dc_energy_meter.py (record type not decoded here)"),
    ("100043a40bf4e434af0e46c3b8eb68e08e616993f70c", "346c410e8c824dd723c0f5b13b9eabc8", "test_multirs.py (record type not decoded here)"),
    ("100380270c1252dad26f0b8eb39162074d140df410", "da3f5fa2860cb1cf86ba7a6d1d16b9dd", "test_vebus.py (record type not decoded here)"),
]

# victron-ble's decrypted test records: (record type, product id, plaintext, source)
_RECORDS = [
    (0x02, 0xA389, "ffffe50400000000030000f40140df03", "test_battery_monitor.py::test_parse"),
    (0x02, 0xA389, "ffffe6040000feff010000000080fe0c", "test_battery_monitor.py::test_aux_midpoint"),
    (0x02, 0xA389, "ffffe6040000feff000000000080feac", "test_battery_monitor.py::test_aux_starter"),
    (0x02, 0xA389, "ffffe6040000ffff020000000080fede", "test_battery_monitor.py::test_aux_temperature"),
    (0x02, 0xA3A4, "ffffc60400007d73feff7fffffffff12", "test_battery_sense.py::test_parse"),
    (0x02, 0xA3A5, "fffff80400008971feff7fffffffff5c", "test_battery_sense.py::test_parse_data_new_model"),
    (0x01, 0xA042, "04006c050e000300130000fe409ac069", "test_solar_charger.py::test_parse"),
    (0x01, 0xA042, "0300f80402000200030000fe8c9a5572", "test_solar_charger.py::test_bulk_charge"),
    (0x01, 0xA042, "0300fb09650032000901ffff31bc45ad", "test_solar_charger.py::test_parse_mppt100"),
    (0x04, 0xA3C0, "00002305ff7f80000000cbdd494cc5d1", "test_dcdc_converter.py::test_parse"),
]
_LENGTH = {0x01: 12, 0x02: 15, 0x04: 10}


def _encrypt(key, counter, plain):
    from Crypto.Cipher import AES
    from Crypto.Util import Counter
    return AES.new(key, AES.MODE_CTR, counter=Counter.new(128, initial_value=counter, little_endian=True)).encrypt(plain)


def _build(record, product, counter, key, plain):
    return (bytes([0x10, 0x00, product & 0xFF, product >> 8, record, counter & 0xFF, counter >> 8, key[0]])
            + _encrypt(key, counter, plain))


def _frame(n, data, key, source):
    return {"address": f"E4:85:01:00:00:{n:02X}", "name": None, "service_data": {},
            "manufacturer_data": {"0x02e1": data.hex() if isinstance(data, bytes) else data},
            "service_uuids": [], "key": key.hex() if isinstance(key, bytes) else key, "source": source}


def frames():
    out = [_frame(n, data, key, f"victron-ble tests/{source}") for n, (data, key, source) in enumerate(_REAL)]
    rng = random.Random(0x02E1)
    records = list(_RECORDS)
    for n in range(12):  # random records
        record = (0x01, 0x02, 0x04)[n % 3]
        records.append((record, rng.choice([0xA389, 0xA042, 0xA3C0, 0xA053]), bytes(rng.getrandbits(8) for _ in range(16)).hex(),
                        f"random record type {record}"))
    for record, product, plain, source in records:
        key = bytes(rng.getrandbits(8) for _ in range(16))
        counter = rng.getrandbits(16)
        plain = bytes.fromhex(plain)
        short = plain[:_LENGTH[record]]
        n = len(out)
        frame = _build(record, product, counter, key, short)
        out.append(_frame(n, frame, key, f"generated from victron-ble {source}"))
        out.append(_frame(n + 1, _build(record, product, counter + 1 & 0xFFFF, key, plain), key,
                          f"generated from victron-ble {source}, 16 bytes"))
        out.append(_frame(n + 2, frame, key, f"generated from victron-ble {source}, the same frame again (replay)"))
        wrong = bytes([key[0] ^ 0x5A]) + key[1:]
        out.append(_frame(n + 3, frame, wrong, f"generated from victron-ble {source}, wrong key"))
        same_first = key[:1] + bytes(rng.getrandbits(8) for _ in range(15))
        out.append(_frame(n + 4, frame, same_first, f"generated from victron-ble {source}, wrong key, right first byte"))
        out.append(_frame(n + 5, frame, None, f"generated from victron-ble {source}, no key"))
        out.append(_frame(n + 6, frame, key[:12], f"generated from victron-ble {source}, 12-byte key"))
    return out


def _lenient():
    """The reference's enums of unpublished fields read as plain integers (see the header)."""
    import victron_ble.devices.battery_monitor as monitor
    import victron_ble.devices.dcdc_converter as dcdc
    import victron_ble.devices.solar_charger as solar

    def plain(value):
        return value
    monitor.AlarmReason = plain
    solar.OperationMode = solar.ChargerError = plain
    dcdc.OperationMode = dcdc.ChargerError = dcdc.OffReason = plain


def reference(frame):
    from victron_ble.devices import BatteryMonitor, BatterySense, DcDcConverter, SolarCharger, detect_device_type

    _lenient()
    data = bytes.fromhex((frame.get("manufacturer_data") or {}).get("0x02e1", ""))
    key = frame.get("key")
    if not key:
        return None
    kind = detect_device_type(data)
    if kind not in (BatteryMonitor, BatterySense, DcDcConverter, SolarCharger):
        return None
    try:
        parsed = kind(key).parse(data)._data
    except Exception:
        return None
    values = {}
    def put(name, value):
        if value is not None:
            values[name] = value
    if kind is SolarCharger:
        model = "Solar Charger"
        put("battery_voltage", parsed["battery_voltage"])
        put("battery_current", parsed["battery_charging_current"])
        put("yield_today", None if parsed["yield_today"] is None else parsed["yield_today"] / 1000)
        put("solar_power", parsed["solar_power"])
    elif kind is DcDcConverter:
        model = "DC/DC Converter"
        put("voltage", parsed["input_voltage"])
        put("battery_voltage", parsed["output_voltage"])
    else:
        model = "Smart Battery Sense" if kind is BatterySense else "Battery Monitor"
        put("battery_voltage", parsed["voltage"])
        current = parsed["current"]
        if current is not None and round(current * 1000) != 0x1FFFFF:  # erratum: not available
            values["battery_current"] = current
        put("state_of_charge", parsed["soc"])
        kelvin = parsed.get("temperature_kelvin")
        if kelvin is not None and round(kelvin * 100) != 0xFFFF:  # erratum: not available
            values["temperature"] = kelvin - 273.15
    counter = data[5] | data[6] << 8
    return {"values": values, "model": model, "counter": counter, "packet_id": counter, "encrypted": True,
            "manufacturer": "Victron Energy"}
