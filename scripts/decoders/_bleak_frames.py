"""Helpers the adapters of the name-told families share (govee, inkbird, sensorpush, thermopro):
the adapter frame as the references' bleak-shaped service info, and their readings in our names.
Not an adapter: the driver skips files starting with "_"."""


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
