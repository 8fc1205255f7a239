#!/usr/bin/env python3
"""The Home Assistant side of scripts/check-homeassistant.

Runs with the Python of Home Assistant's venv (stdlib + aiohttp + PyYAML), one phase per call:

  setup           waits for HA's API, onboards a user through REST, makes a long-lived token (kept
                  in --state) and adds the MQTT integration through the config-flow REST API
  discovery       the bridge's device-based discovery as HA shows it: devices, entities, states;
                  presses the buttons and sets the text (bluez-sim's writes.log must show it)
  bridge-stopped  after SIGTERM to the bridge: entities unavailable, bridge connectivity off
  bridge-started  after the bridge started again: entities available with values
  ha-restarted    after HA restarted: every entity with a state topic has a state within 20 s
  profiles        the devices with a profile (SPEC §15): a SwitchBot Bot's press button and an
                  AM43 blind's cover, called through HA's REST API (bluez-sim's writes.log must
                  show the frames, the bridge's .../result status ok), the blind's battery and position
  rename-before   SPEC §14: the device added at run time (device/add "pantry") has its entity, values, history
  rename-after    after device/rename pantry -> larder: the same entity (unique_id, entity id, device), its
                  discovery config on ble/larder/..., new values, and the history from before the rename
  log FILE...     no WARNING/ERROR line about mqtt in HA's output

Prints "check-homeassistant: <what>: OK" or "check-homeassistant: <what>: FAIL: <why>" per check;
the exit status is 1 when any check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import sys
import time
from pathlib import Path

import aiohttp

ME = "check-homeassistant"
CLIENT_ID_PATH = "/"

# The peripherals of scripts/sim/demo.yaml that the check's bridge config maps.
POLAR = "C8:12:34:56:78:9A"
ENV = "E4:5F:01:AB:CD:EF"
ECHO = "D0:5A:00:00:EC:01"
WEATHER = "C0:FF:EE:00:29:04"  # appended from scripts/homeassistant/weather.yaml
PERIPHERALS = {POLAR: "Polar H10 Sim", ENV: "Env Sensor Sim", ECHO: "Echo Sim", WEATHER: "Weather Sim"}
# The devices with a profile (SPEC §15) from scripts/sim/profiles.yaml, appended to the scenario
# by scripts/check-homeassistant: address -> (the bridge's device name, advertised name).
BOT = "E1:2B:3C:4D:5E:6F"  # switchbot_bot, no password
BLIND = "02:4E:A3:C1:00:43"  # am43_blind
PROFILE_DEVICES = {BOT: ("bot", "WoHand"), BLIND: ("blind", "Blind")}
# Every peripheral whose entities follow the bridge's availability and keep their states.
STATEFUL_PERIPHERALS = [*PERIPHERALS, *PROFILE_DEVICES]
BRIDGE_CLIENT_ID = "ha-check-bridge"
TRACKER_NODE = "ble_tracker_alice_phone"  # scripts/check-homeassistant's tracker
ECHO_WRITE_UUID = "5e1f0002-b5a3-4c1d-9e0a-ec40ec40ec40"
ECHO_LEVEL_UUID = "5e1f0003-b5a3-4c1d-9e0a-ec40ec40ec40"

# Device Information (180A) characteristics -> what HA's device registry could show them as.
DIS_FIELDS = {
    "2a29": ("manufacturer",),
    "2a24": ("model", "model_id"),
    "2a25": ("serial_number",),
    "2a27": ("hw_version",),
    "2a26": ("sw_version", "hw_version", "model_id"),  # firmware revision: HA has no own field
    "2a28": ("sw_version",),
}
DIS_NAMES = {"2a29": "manufacturer", "2a24": "model number", "2a25": "serial number",
             "2a27": "hardware revision", "2a26": "firmware revision", "2a28": "software revision"}

failures = 0


def ok(what: str, detail: str = "") -> None:
    print(f"{ME}: {what}: OK" + (f" ({detail})" if detail else ""), flush=True)


def fail(what: str, why: str) -> None:
    global failures
    failures += 1
    print(f"{ME}: {what}: FAIL: {why}", flush=True)


def note(text: str) -> None:
    print(f"{ME}: {text}", flush=True)


def short(value, limit: int = 400) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def is_number(state: str | None) -> bool:
    try:
        return state is not None and math.isfinite(float(state))
    except ValueError:
        return False


def uuid16(uuid: str) -> str:
    """'2a39' for 2a39 or its 128-bit form; other UUIDs lowercased."""
    u = uuid.lower()
    m = re.fullmatch(r"0000([0-9a-f]{4})-0000-1000-8000-00805f9b34fb", u)
    return m.group(1) if m else u


# ---------------------------------------------------------------------------------------------
# HA's APIs


class HA:
    def __init__(self, session: aiohttp.ClientSession, url: str, token: str | None = None):
        self.session = session
        self.url = url.rstrip("/")
        self.token = token
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.next_id = 1
        self.pending: dict[int, asyncio.Future] = {}
        self.events: dict[int, asyncio.Queue] = {}
        self.reader: asyncio.Task | None = None

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def rest(self, method: str, path: str, **kwargs):
        async with self.session.request(method, self.url + path, headers=self.headers(),
                                        timeout=aiohttp.ClientTimeout(total=30), **kwargs) as r:
            text = await r.text()
            try:
                body = json.loads(text) if text else None
            except ValueError:
                body = text
            return r.status, body

    async def connect(self) -> None:
        self.ws = await self.session.ws_connect(self.url + "/api/websocket", max_msg_size=0, heartbeat=None)
        msg = await self.ws.receive_json(timeout=30)
        if msg.get("type") != "auth_required":
            raise RuntimeError(f"websocket: expected auth_required, got {msg}")
        await self.ws.send_json({"type": "auth", "access_token": self.token})
        msg = await self.ws.receive_json(timeout=30)
        if msg.get("type") != "auth_ok":
            raise RuntimeError(f"websocket auth failed: {msg}")
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.ws is not None
        async for raw in self.ws:
            if raw.type != aiohttp.WSMsgType.TEXT:
                break
            data = json.loads(raw.data)
            for msg in data if isinstance(data, list) else [data]:
                mid = msg.get("id")
                if msg.get("type") == "event" and mid in self.events:
                    self.events[mid].put_nowait(msg["event"])
                elif mid in self.pending:
                    fut = self.pending.pop(mid)
                    if not fut.done():
                        fut.set_result(msg)
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(RuntimeError("websocket closed"))

    async def call(self, type_: str, timeout: float = 30, **fields):
        assert self.ws is not None
        mid = self.next_id
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[mid] = fut
        await self.ws.send_json({"id": mid, "type": type_, **fields})
        msg = await asyncio.wait_for(fut, timeout)
        if not msg.get("success", False):
            raise RuntimeError(f"{type_}: {msg.get('error')}")
        return msg.get("result")

    async def subscribe(self, type_: str, **fields) -> asyncio.Queue:
        """A subscription (e.g. mqtt/subscribe): its events arrive on the returned queue."""
        assert self.ws is not None
        mid = self.next_id
        self.next_id += 1
        queue: asyncio.Queue = asyncio.Queue()
        self.events[mid] = queue
        fut = asyncio.get_running_loop().create_future()
        self.pending[mid] = fut
        await self.ws.send_json({"id": mid, "type": type_, **fields})
        msg = await asyncio.wait_for(fut, 30)
        if not msg.get("success", False):
            raise RuntimeError(f"{type_}: {msg.get('error')}")
        return queue

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            self.reader.cancel()

    # -- the view of the registries and states

    async def snapshot(self) -> "Snapshot":
        devices = await self.call("config/device_registry/list")
        entities = await self.call("config/entity_registry/list")
        states = await self.call("get_states")
        return Snapshot(devices, entities, states)


class Snapshot:
    def __init__(self, devices: list, entities: list, states: list):
        self.devices = devices
        self.entities = entities
        self.states = {s["entity_id"]: s for s in states}

    def mqtt_devices(self) -> list:
        return [d for d in self.devices if any(i[0] == "mqtt" for i in d.get("identifiers", []))]

    def peripheral(self, address: str) -> dict | None:
        ident = "ble_" + address.replace(":", "").lower()
        for d in self.mqtt_devices():
            conns = {(c[0], c[1].upper()) for c in d.get("connections", [])}
            if ["mqtt", ident] in d.get("identifiers", []) or ("bluetooth", address) in conns:
                return d
        return None

    def bridge(self) -> dict | None:
        cands = []
        for d in self.mqtt_devices():
            idents = " ".join(i[1] for i in d.get("identifiers", []))
            text = " ".join(str(d.get(k) or "") for k in ("name", "model", "name_by_user"))
            if BRIDGE_CLIENT_ID in idents or BRIDGE_CLIENT_ID in text or "bridge" in text.lower():
                if not any(c[0] == "bluetooth" for c in d.get("connections", [])):
                    cands.append(d)
        return cands[0] if cands else None

    def entities_of(self, device: dict | None) -> list:
        if device is None:
            return []
        return [e for e in self.entities if e.get("device_id") == device["id"]]

    def state(self, entity_id: str) -> dict | None:
        return self.states.get(entity_id)


def platform_of(entry: dict) -> str:
    return entry["entity_id"].split(".", 1)[0]


def describe(entry: dict, snap: Snapshot) -> str:
    st = snap.state(entry["entity_id"])
    s = st["state"] if st else "(no state)"
    return f"{entry['entity_id']} [{entry.get('unique_id')}] = {s}"


# ---------------------------------------------------------------------------------------------
# Phases


async def wait_api(session: aiohttp.ClientSession, url: str, timeout: float) -> float:
    t0 = time.monotonic()
    while True:
        try:
            # /api/onboarding: 200 until onboarded; afterwards the view is gone (404). Any answer will do.
            async with session.get(url + "/api/onboarding", timeout=aiohttp.ClientTimeout(total=5)) as r:
                if r.status < 500:
                    return time.monotonic() - t0
        except (aiohttp.ClientError, asyncio.TimeoutError):
            pass
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"Home Assistant's API does not answer on {url} after {timeout:.0f} s")
        await asyncio.sleep(1)


async def phase_setup(args, session) -> None:
    waited = await wait_api(session, args.url, args.timeout)
    ha = HA(session, args.url)
    status, steps = await ha.rest("GET", "/api/onboarding")
    ok("Home Assistant API up", f"after {waited:.0f} s")
    client_id = args.url + CLIENT_ID_PATH
    status, body = await ha.rest("POST", "/api/onboarding/users", json={
        "client_id": client_id, "name": "Check", "username": "check", "password": "check-homeassistant-pw",
        "language": "en"})
    if status != 200 or not isinstance(body, dict) or "auth_code" not in body:
        raise RuntimeError(f"POST /api/onboarding/users: {status} {short(body)} (onboarding steps: {short(steps)})")
    status, tokens = await ha.rest("POST", "/auth/token", data={
        "grant_type": "authorization_code", "code": body["auth_code"], "client_id": client_id})
    if status != 200 or "access_token" not in tokens:
        raise RuntimeError(f"POST /auth/token: {status} {short(tokens)}")
    ha.token = tokens["access_token"]
    # The other onboarding steps (core_config, analytics, integration) are left undone: the
    # integration step adds met, radio_browser, ... whose internet lookups only make noise here.
    await ha.connect()
    long_lived = await ha.call("auth/long_lived_access_token", client_name="check-homeassistant", lifespan=1)
    # A user adds integrations once HA has started; on a first start HA is still installing the
    # requirements of its always-on integrations (minutes with a compiler run) and sends its MQTT
    # birth message only after it started.
    t0 = time.monotonic()
    config = await ha.call("get_config")
    while config.get("state") != "RUNNING":
        if time.monotonic() - t0 > args.timeout:
            raise RuntimeError(f"Home Assistant not RUNNING after {args.timeout:.0f} s: {config.get('state')}")
        await asyncio.sleep(1)
        config = await ha.call("get_config")
    if time.monotonic() - t0 > 1:
        note(f"Home Assistant RUNNING after another {time.monotonic() - t0:.0f} s")
    Path(args.state).write_text(json.dumps({"token": long_lived, "version": config.get("version")}))
    ok("onboarding through REST", f"user check, long-lived token; HA {config.get('version')}")

    # The MQTT integration through its config flow.
    status, flow = await ha.rest("POST", "/api/config/config_entries/flow",
                                 json={"handler": "mqtt", "show_advanced_options": True})
    if status != 200:
        raise RuntimeError(f"starting the mqtt config flow: {status} {short(flow)}")
    for _ in range(6):
        kind = flow.get("type")
        if kind == "create_entry":
            break
        if kind == "menu":
            options = flow.get("menu_options")
            choice = "broker" if "broker" in (options or []) else (options or [None])[0]
            status, flow = await ha.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}",
                                         json={"next_step_id": choice})
        elif kind == "form":
            if flow.get("errors"):
                raise RuntimeError(f"mqtt config flow step {flow.get('step_id')}: errors {flow['errors']}")
            schema = flow.get("data_schema", [])
            answer = form_answer(schema, {"broker": "127.0.0.1", "port": args.mqtt_port})
            note(f"mqtt config flow step {flow.get('step_id')}: sending {answer}")
            status, flow = await ha.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", json=answer)
            if status != 200:
                raise RuntimeError(f"mqtt config flow: {status} {short(flow)}; the form was {short(schema, 3000)}")
        else:
            raise RuntimeError(f"mqtt config flow: unexpected {short(flow)}")
        if status != 200:
            raise RuntimeError(f"mqtt config flow: {status} {short(flow)}")
    if flow.get("type") != "create_entry":
        raise RuntimeError(f"mqtt config flow did not create an entry: {short(flow)}")
    entry = flow.get("result") or {}
    ok("MQTT integration added through the config flow",
       f"broker 127.0.0.1:{args.mqtt_port}, entry state {entry.get('state')}")
    await ha.close()


def form_answer(schema: list, values: dict) -> dict:
    """A config-flow form's answer: `values` where named, else each field's default; sections
    (type "expandable") nest."""
    answer = {}
    for field in schema:
        name = field.get("name")
        if field.get("type") == "expandable":
            answer[name] = form_answer(field.get("schema", []), values)
        elif name in values:
            answer[name] = values[name]
        elif "default" in field:
            answer[name] = field["default"]
        elif field.get("required"):
            selector = field.get("selector") or {}
            if "boolean" in selector:
                answer[name] = False
            elif "select" in selector and selector["select"].get("options"):
                first = selector["select"]["options"][0]
                answer[name] = first["value"] if isinstance(first, dict) else first
    return answer


async def connect(args, session) -> HA:
    state = json.loads(Path(args.state).read_text())
    ha = HA(session, args.url, state["token"])
    await ha.connect()
    return ha


async def wait_settled(ha: HA, ready, timeout: float, quiet: float = 3.0) -> Snapshot:
    """Polls until ready(snapshot) holds and the registries did not change for `quiet` seconds."""
    t0 = time.monotonic()
    last_key = None
    since = time.monotonic()
    snap = await ha.snapshot()
    while time.monotonic() - t0 < timeout:
        snap = await ha.snapshot()
        key = (len(snap.devices), len(snap.entities),
               tuple(sorted((e["entity_id"], str(e.get("disabled_by"))) for e in snap.entities)))
        if key != last_key:
            last_key, since = key, time.monotonic()
        if ready(snap) and time.monotonic() - since >= quiet:
            return snap
        await asyncio.sleep(0.5)
    return snap


def scenario_dis() -> dict[str, str]:
    """The Polar H10 Sim's Device Information values from demo.yaml: {uuid16: text}."""
    import yaml

    path = Path(os.environ.get("CHECK_SCENARIO", "/check/demo.yaml"))
    try:
        scenario = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return {}
    for dev in scenario.get("devices", []) or []:
        if str(dev.get("address", "")).upper() != POLAR:
            continue
        for svc in dev.get("services", []) or []:
            if uuid16(str(svc.get("uuid", ""))) != "180a":
                continue
            out = {}
            for ch in svc.get("characteristics", []) or []:
                u = uuid16(str(ch.get("uuid", "")))
                if "value_text" in ch:
                    out[u] = str(ch["value_text"])
                elif "value" in ch:
                    try:
                        out[u] = bytes.fromhex(str(ch["value"])).decode("utf-8", "replace").rstrip("\0")
                    except ValueError:
                        pass
            return out
    return {}


def writes_log(work: str) -> list[tuple[str, str, str]]:
    """(address, uuid, hex) of every write bluez-sim accepted."""
    out = []
    try:
        lines = Path(work, "writes.log").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split()
        if len(parts) >= 6:
            out.append((parts[1].upper(), uuid16(parts[2]), parts[5].lower()))
        elif len(parts) == 5:  # an empty value
            out.append((parts[1].upper(), uuid16(parts[2]), ""))
    return out


async def wait_for(predicate, timeout: float, interval: float = 0.25):
    t0 = time.monotonic()
    while True:
        result = await predicate()
        if result or time.monotonic() - t0 > timeout:
            return result
        await asyncio.sleep(interval)


def entity_matching(entries: list, snap: Snapshot, platform: str, *, uid: str | None = None,
                    device_class: str | None = None, unit: str | None = None, name: str | None = None) -> dict | None:
    for e in entries:
        if platform_of(e) != platform:
            continue
        st = snap.state(e["entity_id"]) or {}
        attrs = st.get("attributes", {})
        uid_l = (e.get("unique_id") or "").lower()
        if uid is not None and uid not in uid_l:
            continue
        if device_class is not None and attrs.get("device_class") != device_class \
                and e.get("original_device_class") != device_class:
            continue
        if unit is not None and attrs.get("unit_of_measurement") != unit:
            continue
        if name is not None:
            text = " ".join([e["entity_id"], uid_l, str(e.get("original_name") or ""),
                             str(attrs.get("friendly_name") or "")]).lower()
            if name not in text:
                continue
        return e
    return None


async def phase_discovery(args, session) -> None:
    ha = await connect(args, session)

    def ready(s: Snapshot) -> bool:
        return all(s.peripheral(a) for a in PERIPHERALS) and s.bridge() is not None and all(
            len(s.entities_of(s.peripheral(a))) > 0 for a in PERIPHERALS)

    t0 = time.monotonic()
    snap = await wait_settled(ha, ready, timeout=60)
    took = time.monotonic() - t0
    # The values: notified ones come by themselves; read-once ones (body sensor location) only
    # when the bridge re-sends them on HA's birth message ("homeassistant/status" "online").
    snap, stateful, missing, waited = await wait_states(ha, 15)
    if stateful and not missing:
        ok("every entity with a state topic has a value", f"{len(stateful)} entities, "
           f"{took + waited:.1f} s after the MQTT integration was added")
    else:
        fail("every entity with a state topic has a value", f"after {took + waited:.0f} s: {missing}")
    mqtt_devices = snap.mqtt_devices()
    note(f"HA shows {len(mqtt_devices)} MQTT devices after {took:.0f} s: "
         + "; ".join(f"{d.get('name')} [{', '.join(i[1] for i in d.get('identifiers', []))}] "
                     f"{len(snap.entities_of(d))} entities" for d in mqtt_devices))
    configs = await discovery_configs(ha, snap)
    topics = sorted({c["topic"] for c in configs.values() if c.get("topic")})
    note(f"discovery topics of the peripherals' entities: {topics}")
    for d in mqtt_devices:
        for e in snap.entities_of(d):
            note(f"  {d.get('name')}: {describe(e, snap)}" + (f" disabled_by={e.get('disabled_by')}"
                                                             if e.get("disabled_by") else ""))

    # The bridge device.
    bridge = snap.bridge()
    if bridge is None:
        fail("bridge device", f"no MQTT device for the bridge ({BRIDGE_CLIENT_ID}) among "
             f"{[d.get('name') for d in mqtt_devices]}")
    else:
        idents = [i[1] for i in bridge.get("identifiers", [])]
        if bridge.get("sw_version"):
            ok("bridge device", f"{bridge.get('name')!r}, identifiers {idents}, model {bridge.get('model')!r}, "
               f"sw_version {bridge.get('sw_version')!r}")
        else:
            fail("bridge device", f"no sw_version: {short(bridge)}")
        conn = entity_matching(snap.entities_of(bridge), snap, "binary_sensor", device_class="connectivity")
        st = snap.state(conn["entity_id"]) if conn else None
        if st and st["state"] == "on":
            ok("bridge connectivity binary_sensor on", conn["entity_id"])
        else:
            fail("bridge connectivity binary_sensor on",
                 f"{describe(conn, snap) if conn else 'none'} among "
                 f"{[describe(e, snap) for e in snap.entities_of(bridge)]}")

    # The peripherals as devices.
    for address, advertised in PERIPHERALS.items():
        what = f"device {advertised}"
        dev = snap.peripheral(address)
        if dev is None:
            fail(what, "not in HA's device registry")
            continue
        problems = []
        ident = "ble_" + address.replace(":", "").lower()
        if ["mqtt", ident] not in dev.get("identifiers", []):
            problems.append(f"identifiers {dev.get('identifiers')} lack {ident}")
        if not any(c[0] == "bluetooth" and c[1].upper() == address for c in dev.get("connections", [])):
            problems.append(f"connections {dev.get('connections')} lack bluetooth {address}")
        if dev.get("name") != advertised:
            problems.append(f"name {dev.get('name')!r}, not the advertised {advertised!r}")
        if bridge is None or dev.get("via_device_id") != bridge["id"]:
            problems.append(f"via_device_id {dev.get('via_device_id')} is not the bridge device")
        if problems:
            fail(what, "; ".join(problems))
        else:
            ok(what, f"identifier {ident}, bluetooth {address}, via the bridge")

    # Polar H10 Sim's Device Information.
    polar = snap.peripheral(POLAR)
    if polar is not None:
        expected = scenario_dis()
        fields = {k: polar.get(k) for k in ("manufacturer", "model", "model_id", "sw_version",
                                            "hw_version", "serial_number")}
        problems = []
        for key in ("manufacturer", "model", "sw_version", "hw_version", "serial_number"):
            if not isinstance(fields[key], str) or not fields[key].strip():
                problems.append(f"{key} empty")
        for u, text in expected.items():
            if u in DIS_FIELDS and not any(fields.get(k) and text in fields[k] for k in DIS_FIELDS[u]):
                problems.append(f"{DIS_NAMES[u]} {text!r} (180A {u}) not in {'/'.join(DIS_FIELDS[u])}")
        if problems:
            fail("Polar H10 Sim Device Information", "; ".join(problems) + f": {fields}")
        else:
            ok("Polar H10 Sim Device Information",
               ", ".join(f"{k} {v!r}" for k, v in fields.items() if v) +
               ("" if expected else " (demo.yaml has no 180A to compare with)"))

    await check_polar_entities(ha, snap, args)
    await check_env_entities(snap)
    await check_self_describing(ha, snap)
    await check_echo(ha, snap, args)
    await check_echo_number(ha, snap, args)
    await ha.close()


async def entity_details(ha: HA, entries: list) -> dict[str, dict]:
    """config/entity_registry/get_entries: original_device_class, capabilities, ... by entity_id."""
    if not entries:
        return {}
    try:
        got = await ha.call("config/entity_registry/get_entries", entity_ids=[e["entity_id"] for e in entries])
        return {k: v for k, v in got.items() if v}
    except RuntimeError:
        out = {}
        for e in entries:
            out[e["entity_id"]] = await ha.call("config/entity_registry/get", entity_id=e["entity_id"])
        return out


async def check_polar_entities(ha: HA, snap: Snapshot, args) -> None:
    polar = snap.peripheral(POLAR)
    if polar is None:
        fail("Polar H10 Sim entities", "no device")
        return
    entries = snap.entities_of(polar)
    details = await entity_details(ha, entries)
    for e in entries:
        e["original_device_class"] = (details.get(e["entity_id"]) or {}).get("original_device_class")

    # Heart rate.
    hr = entity_matching(entries, snap, "sensor", unit="bpm")
    st = snap.state(hr["entity_id"]) if hr else None
    if st and is_number(st["state"]):
        attrs = {k: v for k, v in st["attributes"].items() if k in ("contact", "rr", "rr_intervals",
                                                                  "sensor_contact", "energy_expended")}
        ok("heart rate sensor", f"{hr['entity_id']} = {st['state']} bpm" + (f", attributes {attrs}" if attrs else ""))
        if not any("contact" in k or k.startswith("rr") for k in st["attributes"]):
            note(f"heart rate sensor: NOTE: no contact/rr attributes ({sorted(st['attributes'])})")
    else:
        fail("heart rate sensor", f"no sensor with unit bpm and a numeric state: "
             f"{describe(hr, snap) if hr else [describe(e, snap) for e in entries]}")

    # Body sensor location.
    bsl = entity_matching(entries, snap, "sensor", uid="2a38") or entity_matching(entries, snap, "sensor",
                                                                                     name="location")
    st = snap.state(bsl["entity_id"]) if bsl else None
    if st and st["attributes"].get("device_class") == "enum" and st["state"] == "Chest":
        ok("body sensor location sensor", f"{bsl['entity_id']} = Chest, options {st['attributes'].get('options')}")
    else:
        fail("body sensor location sensor", "want device_class enum and state Chest: " +
             (f"{describe(bsl, snap)} attributes {short(st['attributes']) if st else None}" if bsl else "no entity"))

    # Battery.
    bat = entity_matching(entries, snap, "sensor", device_class="battery")
    st = snap.state(bat["entity_id"]) if bat else None
    if st and st["attributes"].get("unit_of_measurement") == "%" and is_number(st["state"]) \
            and bat.get("entity_category") == "diagnostic":
        ok("battery sensor", f"{bat['entity_id']} = {st['state']} %, diagnostic")
    else:
        fail("battery sensor", "want device_class battery, unit %, numeric, entity_category diagnostic: " +
             (f"{describe(bat, snap)} category {bat.get('entity_category')} unit "
              f"{st['attributes'].get('unit_of_measurement') if st else None}" if bat else "no entity"))

    # Connectivity of the peripheral.
    conn = entity_matching(entries, snap, "binary_sensor", device_class="connectivity")
    st = snap.state(conn["entity_id"]) if conn else None
    if st and st["state"] == "on":
        ok("Polar H10 Sim connectivity binary_sensor on", conn["entity_id"])
    else:
        fail("Polar H10 Sim connectivity binary_sensor on", describe(conn, snap) if conn else "no entity")

    # RSSI: diagnostic, disabled by default.
    rssi = next((e for e in entries if e.get("original_device_class") == "signal_strength"
                 or "rssi" in (e.get("unique_id") or "").lower()), None)
    if rssi is None:
        fail("RSSI sensor (disabled by default)", "no entity")
    else:
        d = details.get(rssi["entity_id"]) or {}
        problems = []
        if rssi.get("disabled_by") != "integration":
            problems.append(f"disabled_by {rssi.get('disabled_by')!r}, want 'integration'")
        if rssi.get("entity_category") != "diagnostic":
            problems.append(f"entity_category {rssi.get('entity_category')!r}")
        if d.get("original_device_class") != "signal_strength":
            problems.append(f"device_class {d.get('original_device_class')!r}")
        unit = (d.get("capabilities") or {}).get("unit_of_measurement") or d.get("unit_of_measurement") \
            or (d.get("options") or {}).get("sensor", {}).get("unit_of_measurement")
        if problems:
            fail("RSSI sensor (disabled by default)", f"{rssi['entity_id']}: " + "; ".join(problems))
        else:
            ok("RSSI sensor (disabled by default)", f"{rssi['entity_id']}, signal_strength, diagnostic"
               + (f", unit {unit}" if unit else ""))

    # The control point button: pressing it writes 01 to 2a39 (MQTT .../2a39/set, then the peripheral).
    # (HA subscribes with MQTT 5 "no local": its own publishes are seen through the commands.log
    # of a mosquitto_sub that scripts/check-homeassistant runs.)
    buttons = [e for e in entries if platform_of(e) == "button"]
    cp = entity_matching(buttons, snap, "button", uid="2a39")
    if cp is None:
        fail("heart rate control point button", f"no button with 2a39 in its unique_id among "
             f"{[e['entity_id'] for e in buttons]}")
    else:
        before = len(writes_log(args.work))
        sent = len(commands_log(args.work))
        await ha.call("call_service", domain="button", service="press", target={"entity_id": cp["entity_id"]})

        async def written():
            return [w for w in writes_log(args.work)[before:] if w[0] == POLAR and w[1] == "2a39"]

        got = await wait_for(written, 10)

        # The recording mosquitto_sub is another subscriber: the broker may deliver the .../set to
        # the bridge (which writes) before it reaches commands.log (seen under load).
        async def sets():
            return [c for c in commands_log(args.work)[sent:] if c[0].endswith("/set")]

        published = await wait_for(sets, 5)
        payload = bytes.fromhex(published[0][1]).decode("utf-8", "replace") if published else None
        if got and got[0][2] == "01" and payload is not None and command_bytes(payload) == "01":
            ok("heart rate control point button", f"{cp['entity_id']} pressed: {published[0][0]} {payload} -> "
               "bluez-sim wrote 01 to 2a39")
        else:
            fail("heart rate control point button", f"pressing {cp['entity_id']}: published "
                 f"{published} (want .../set 01); bluez-sim writes {got}")

    # Refresh buttons: the readable characteristics (2a38, 2a19) get one that publishes its own
    # characteristic's .../get, which the bridge answers with an ok read on .../result.
    for u, service, name, what in (("2a38", "180d", "body_sensor_location", "body sensor location"),
                                   ("2a19", "180f", "battery", "battery")):
        btn = entity_matching(buttons, snap, "button", uid=u) or entity_matching(buttons, snap, "button", uid=name)
        if btn is None:
            fail(f"{what} refresh button", f"no button with {u} or {name} in its unique_id among "
                 f"{[e['entity_id'] for e in buttons]}")
            continue
        await check_refresh_button(ha, btn, f"ble/polar_h10/{service}/{name}", what, args.work)


async def check_refresh_button(ha: HA, btn: dict, topic: str, what: str, work: str) -> None:
    """Pressing `btn` publishes `topic`/get (its own characteristic, nothing else) and the bridge
    answers on `topic`/result with an ok read."""
    sent = len(commands_log(work))
    await ha.call("call_service", domain="button", service="press", target={"entity_id": btn["entity_id"]})

    def good_results(log):
        results = [json_payload(c[1]) for c in log if c[0] == topic + "/result"]
        return results, [r for r in results if r.get("status") == "ok" and r.get("op") == "read"]

    async def answered():
        log = commands_log(work)[sent:]
        return log if good_results(log)[1] else None

    log = await wait_for(answered, 10) or commands_log(work)[sent:]
    gets = [c[0] for c in log if c[0].endswith("/get")]
    results, good = good_results(log)
    if gets == [topic + "/get"] and good:
        ok(f"{what} refresh button", f"{btn['entity_id']} pressed: {topic}/get -> result {good[0]}")
    elif topic + "/get" not in gets:
        fail(f"{what} refresh button", f"pressing {btn['entity_id']} published {gets or 'no .../get'}, "
             f"want {topic}/get")
    elif len(gets) > 1:
        fail(f"{what} refresh button", f"pressing {btn['entity_id']} published {gets}, want only {topic}/get")
    else:
        fail(f"{what} refresh button", f"{topic}/get answered {results or 'nothing'} within 10 s, "
             f"want status ok, op read")


def json_payload(hex_payload: str) -> dict:
    """A hex payload of commands.log as a JSON object ({} when it is not one)."""
    try:
        value = json.loads(bytes.fromhex(hex_payload).decode("utf-8"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def command_bytes(payload: str) -> str | None:
    """The bytes a /set payload writes, as the bridge reads it: bare hex or {"raw": hex}."""
    text = payload.strip()
    if re.fullmatch(r"([0-9A-Fa-f]{2})+", text):
        return text.lower()
    try:
        value = json.loads(text)
    except ValueError:
        return None
    raw = value.get("raw") if isinstance(value, dict) else None
    return raw.lower() if isinstance(raw, str) else None


def commands_log(work: str) -> list[tuple[str, str]]:
    """(topic, hex payload) of every .../set, .../get and .../result on the broker (mosquitto_sub -F '%t %x')."""
    out = []
    try:
        lines = Path(work, "commands.log").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        topic, _, payload = line.partition(" ")
        out.append((topic, payload.strip().lower()))
    return out


async def check_env_entities(snap: Snapshot) -> None:
    env = snap.peripheral(ENV)
    entries = snap.entities_of(env)
    for what, dc, unit in (("temperature sensor", "temperature", "°C"), ("humidity sensor", "humidity", "%")):
        e = entity_matching(entries, snap, "sensor", device_class=dc)
        st = snap.state(e["entity_id"]) if e else None
        if st and st["attributes"].get("unit_of_measurement") == unit and is_number(st["state"]):
            ok(f"Env Sensor Sim {what}", f"{e['entity_id']} = {st['state']} {unit}")
        else:
            fail(f"Env Sensor Sim {what}", f"want device_class {dc}, unit {unit}, numeric: " +
                 (describe(e, snap) + f" unit {st['attributes'].get('unit_of_measurement') if st else None}"
                  if e else f"no entity among {[describe(x, snap) for x in entries]}"))


async def check_self_describing(ha: HA, snap: Snapshot) -> None:
    """SPEC §11: the Weather Sim's characteristic has no format or name in the bridge's config; its
    0x2904 (sint16, exponent -2, °C) and 0x2901 ("Outdoor temperature") describe it."""
    what = "Weather Sim self-describing temperature (0x2904, 0x2901)"
    entries = snap.entities_of(snap.peripheral(WEATHER))
    details = await entity_details(ha, entries)
    e = entity_matching(entries, snap, "sensor", name="outdoor temperature")
    st = snap.state(e["entity_id"]) if e else None
    problems = []
    if e is None:
        fail(what, f"no sensor named 'Outdoor temperature' among {[describe(x, snap) for x in entries]}")
        return
    reg = details.get(e["entity_id"]) or {}
    name = reg.get("original_name") or e.get("original_name") or (st or {}).get("attributes", {}).get("friendly_name")
    if not name or "Outdoor temperature" not in str(name):
        problems.append(f"name {name!r}")
    unit = (st or {}).get("attributes", {}).get("unit_of_measurement")
    if unit != "°C":
        problems.append(f"unit {unit!r}, not °C")
    dc = reg.get("original_device_class") or (st or {}).get("attributes", {}).get("device_class")
    if dc != "temperature":
        problems.append(f"device class {dc!r}, not temperature")
    try:
        if st is None or abs(float(st["state"]) - 23.45) > 1e-6:
            problems.append(f"state {st['state'] if st else None!r}, not 23.45")
    except ValueError:
        problems.append(f"state {st['state']!r} is not a number")
    if problems:
        fail(what, "; ".join(problems) + f": {describe(e, snap)}")
    else:
        ok(what, f"{e['entity_id']} {name!r} = {st['state']} {unit}, device class {dc}")


async def check_echo(ha: HA, snap: Snapshot, args) -> None:
    echo = snap.peripheral(ECHO)
    entries = snap.entities_of(echo)
    text = entity_matching(entries, snap, "text", name="write")
    if text is None:
        fail("Echo Sim text entity", f"no text entity named like 'write' among {[describe(e, snap) for e in entries]}")
        return
    before = len(writes_log(args.work))
    try:
        await ha.call("call_service", domain="text", service="set_value",
                      target={"entity_id": text["entity_id"]}, service_data={"value": "cafe01"})
    except RuntimeError as error:
        fail("Echo Sim text entity", f"text.set_value on {text['entity_id']}: {error}")
        return

    async def written():
        return [w for w in writes_log(args.work)[before:] if w[0] == ECHO and w[1] == ECHO_WRITE_UUID]

    got = await wait_for(written, 10)
    if got and got[0][2] == "cafe01":
        ok("Echo Sim text entity", f"{text['entity_id']} set to cafe01 -> bluez-sim wrote cafe01 to 5e1f0002")
    else:
        fail("Echo Sim text entity", f"text.set_value cafe01 on {text['entity_id']}: bluez-sim writes {got}")


async def check_echo_number(ha: HA, snap: Snapshot, args) -> None:
    """5e1f0003 (write without response) configured as uint8: a number entity, 0..255."""
    entries = snap.entities_of(snap.peripheral(ECHO))
    number = entity_matching(entries, snap, "number", name="level")
    if number is None:
        fail("Echo Sim number entity", f"no number entity named like 'level' among {[describe(e, snap) for e in entries]}")
        return
    attributes = (snap.state(number["entity_id"]) or {}).get("attributes", {})
    if attributes.get("min") != 0 or attributes.get("max") != 255:
        fail("Echo Sim number entity", f"range {attributes.get('min')}..{attributes.get('max')}, expected 0..255")
        return
    before = len(writes_log(args.work))
    try:
        await ha.call("call_service", domain="number", service="set_value",
                      target={"entity_id": number["entity_id"]}, service_data={"value": 42})
    except RuntimeError as error:
        fail("Echo Sim number entity", f"number.set_value on {number['entity_id']}: {error}")
        return

    async def written():
        return [w for w in writes_log(args.work)[before:] if w[0] == ECHO and w[1] == ECHO_LEVEL_UUID]

    got = await wait_for(written, 10)
    if got and got[0][2] == "2a":
        ok("Echo Sim number entity", f"{number['entity_id']} (0..255) set to 42 -> bluez-sim wrote 2a to 5e1f0003")
    else:
        fail("Echo Sim number entity", f"number.set_value 42 on {number['entity_id']}: bluez-sim writes {got}")


async def discovery_configs(ha: HA, snap: Snapshot) -> dict[str, dict]:
    """entity_id -> {"topic": discovery topic, "payload": its config} of the peripherals' loaded
    entities (mqtt/device/debug_info)."""
    out = {}
    for address in STATEFUL_PERIPHERALS:
        out.update(await discovery_configs_of(ha, snap.peripheral(address)))
    return out


def stateful_entities(snap: Snapshot, configs: dict[str, dict]) -> list:
    """Enabled entities of the three peripherals that have a state topic (by their discovery
    config; without it: every sensor, binary_sensor and text)."""
    out = []
    for address in STATEFUL_PERIPHERALS:
        for e in snap.entities_of(snap.peripheral(address)):
            if e.get("disabled_by") is not None:
                continue
            config = configs.get(e["entity_id"])
            if config is not None:
                if config["payload"].get("state_topic") or config["payload"].get("stat_t"):
                    out.append(e)
            elif platform_of(e) in ("sensor", "binary_sensor", "text"):
                out.append(e)
    return out


async def phase_bridge_stopped(args, session) -> None:
    ha = await connect(args, session)
    t0 = time.monotonic()

    async def all_unavailable():
        snap = await ha.snapshot()
        entries = [e for address in STATEFUL_PERIPHERALS for e in snap.entities_of(snap.peripheral(address))
                   if e.get("disabled_by") is None]
        pending = [describe(e, snap) for e in entries
                   if (snap.state(e["entity_id"]) or {}).get("state") != "unavailable"]
        return snap, entries, pending

    snap, entries, pending = await all_unavailable()
    while pending and time.monotonic() - t0 < 15:
        await asyncio.sleep(0.5)
        snap, entries, pending = await all_unavailable()
    if entries and not pending:
        ok("peripheral entities unavailable after SIGTERM to the bridge",
           f"{len(entries)} entities, within {time.monotonic() - t0:.1f} s")
    else:
        fail("peripheral entities unavailable after SIGTERM to the bridge",
             f"after 15 s still available: {pending}" if entries else "no entities")
    bridge = snap.bridge()
    conn = entity_matching(snap.entities_of(bridge), snap, "binary_sensor", device_class="connectivity")
    st = snap.state(conn["entity_id"]) if conn else None
    if st and st["state"] == "off":
        ok("bridge connectivity binary_sensor off after SIGTERM", conn["entity_id"])
    else:
        fail("bridge connectivity binary_sensor off after SIGTERM", describe(conn, snap) if conn else "no entity")
    await ha.close()


async def wait_states(ha: HA, timeout: float):
    """Waits until every stateful peripheral entity has a real state; (snapshot, entries, missing, seconds)."""
    t0 = time.monotonic()
    while True:
        snap = await ha.snapshot()
        # (after an HA restart the entities load one by one: their configs are read every time)
        configs = await discovery_configs(ha, snap)
        entries = stateful_entities(snap, configs)
        missing = [describe(e, snap) for e in entries
                   if (snap.state(e["entity_id"]) or {}).get("state") in (None, "unknown", "unavailable")]
        if (entries and not missing) or time.monotonic() - t0 > timeout:
            return snap, entries, missing, time.monotonic() - t0
        await asyncio.sleep(0.5)


async def phase_bridge_started(args, session) -> None:
    ha = await connect(args, session)
    snap, entries, missing, took = await wait_states(ha, 30)
    if entries and not missing:
        ok("peripheral entities back with values after the bridge restarted",
           f"{len(entries)} entities within {took:.1f} s")
    else:
        fail("peripheral entities back with values after the bridge restarted",
             f"after {took:.0f} s: {missing}" if entries else "no entities")
    bridge = snap.bridge()
    conn = entity_matching(snap.entities_of(bridge), snap, "binary_sensor", device_class="connectivity")
    st = snap.state(conn["entity_id"]) if conn else None
    if st and st["state"] == "on":
        ok("bridge connectivity binary_sensor on again", conn["entity_id"])
    else:
        fail("bridge connectivity binary_sensor on again", describe(conn, snap) if conn else "no entity")
    await ha.close()


async def phase_ha_restarted(args, session) -> None:
    waited = await wait_api(session, args.url, args.timeout)
    ha = await connect(args, session)
    # Wait for the MQTT config entry to be loaded, then give the entities 20 s.
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        entries = await ha.call("config_entries/get", domain="mqtt")
        if entries and entries[0].get("state") == "loaded":
            break
        await asyncio.sleep(0.5)
    loaded = time.monotonic() - t0
    snap, entries, missing, took = await wait_states(ha, 20)
    if entries and not missing:
        ok("every entity has a state again after HA restarted",
           f"{len(entries)} entities within {took:.1f} s of MQTT being loaded "
           f"(API up after {waited:.0f} s, MQTT loaded {loaded:.1f} s later)")
    else:
        fail("every entity has a state again after HA restarted",
             f"20 s after MQTT was loaded: {missing}" if entries else "no entities")
    await ha.close()


def phase_log(files: list[str]) -> None:
    bad = []
    level = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")
    for name in files:
        try:
            lines = Path(name).read_text(errors="replace").splitlines()
        except OSError:
            continue
        # A logged exception continues on the following lines: count them with their record.
        current = None
        for line in lines:
            if re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", line):
                current = line if level.search(line) else None
                if current and "mqtt" in line.lower():
                    bad.append(f"{Path(name).name}: {line}")
            elif current and "mqtt" in line.lower() and "mqtt" not in current.lower():
                bad.append(f"{Path(name).name}: {current} | {line.strip()}")
    if bad:
        fail("no WARNING/ERROR about mqtt in HA's log", f"{len(bad)} lines:\n" + "\n".join(bad[:40]))
    else:
        ok("no WARNING/ERROR about mqtt in HA's log")


LEGACY_UID = "ble_c8123456789a_180d_heart_rate"


async def phase_legacy_before(args, session) -> None:
    """Before the bridge runs: the per-entity config an earlier version left retained made an entity."""
    ha = await connect(args, session)
    entry = None
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30:
        entities = await ha.call("config/entity_registry/list")
        entry = next((e for e in entities if e.get("unique_id") == LEGACY_UID), None)
        if entry:
            break
        await asyncio.sleep(0.5)
    await ha.close()
    if not entry:
        fail("the earlier version's heart rate entity exists", f"no entity with unique_id {LEGACY_UID} after 30 s")
        return
    state = json.load(open(args.state)) if os.path.exists(args.state) else {}
    state["legacy_entity_id"] = entry["entity_id"]
    json.dump(state, open(args.state, "w"))
    ok("the earlier version's heart rate entity exists", entry["entity_id"])


async def wait_tracker(ha: HA, want: str, timeout: float):
    """The device_tracker of the alice_phone tracker once its state is `want` (or the last seen), its registry entry,
    its device, the snapshot and the seconds waited."""
    t0 = time.monotonic()
    while True:
        snap = await ha.snapshot()
        device = next((d for d in snap.mqtt_devices()
                       if ["mqtt", TRACKER_NODE] in d.get("identifiers", [])), None)
        entries = snap.entities_of(device) if device else []
        tracker = next((e for e in entries if platform_of(e) == "device_tracker"), None)
        st = snap.state(tracker["entity_id"]) if tracker else None
        if (st and st["state"] == want) or time.monotonic() - t0 > timeout:
            return tracker, st, device, entries, snap, time.monotonic() - t0
        await asyncio.sleep(0.5)


async def phase_tracker(args, session, want: str) -> None:
    ha = await connect(args, session)
    tracker, st, device, entries, snap, took = await wait_tracker(ha, want, 30)
    await ha.close()
    what = f"tracker alice_phone {want}"
    if tracker is None:
        fail(what, f"no device_tracker on a device {TRACKER_NODE}: devices "
                   f"{[d.get('name') for d in snap.mqtt_devices()]}")
        return
    attrs = (st or {}).get("attributes", {})
    problems = []
    if not st or st["state"] != want:
        problems.append(f"state {(st or {}).get('state')!r} after {took:.0f} s")
    if attrs.get("source_type") != "bluetooth_le":
        problems.append(f"source_type {attrs.get('source_type')!r}")
    if not attrs.get("room"):
        problems.append(f"no room attribute: {attrs}")
    if want == "home" and not isinstance(attrs.get("rssi"), int):
        problems.append(f"rssi attribute {attrs.get('rssi')!r}")
    rssi = next((e for e in entries if platform_of(e) == "sensor" and "rssi" in (e.get("unique_id") or "")), None)
    if rssi is None or rssi.get("disabled_by") != "integration":
        problems.append(f"the RSSI sensor is not disabled by default: {rssi}")
    if problems:
        fail(what, "; ".join(problems))
    else:
        ok(what, f"{tracker['entity_id']} = {st['state']} within {took:.1f} s, room {attrs.get('room')!r}, "
                 f"rssi {attrs.get('rssi')}")


async def phase_legacy_after(args, session) -> None:
    """After the bridge took over: the same entity (same entity_id), now in the device-based config."""
    state = json.load(open(args.state)) if os.path.exists(args.state) else {}
    before = state.get("legacy_entity_id")
    ha = await connect(args, session)
    entities = await ha.call("config/entity_registry/list")
    devices = await ha.call("config/device_registry/list")
    await ha.close()
    matching = [e for e in entities if e.get("unique_id") == LEGACY_UID]
    if len(matching) != 1:
        fail("upgrade keeps the heart rate entity", f"{len(matching)} entities with unique_id {LEGACY_UID}")
        return
    entry = matching[0]
    device = next((d for d in devices if d["id"] == entry.get("device_id")), None)
    via = next((d for d in devices if device and d["id"] == device.get("via_device_id")), None)
    if before and entry["entity_id"] != before:
        fail("upgrade keeps the heart rate entity", f"entity id changed: {before} -> {entry['entity_id']}")
    elif not via or "ble_mqtt_bridge_ha-check-bridge" not in str(via.get("identifiers")):
        fail("upgrade keeps the heart rate entity", f"not on a device via the bridge device: {short(device)}")
    else:
        ok("upgrade keeps the heart rate entity", f"{entry['entity_id']}, now in the device-based config")


# The SPEC §13 devices of scripts/homeassistant/families.yaml (bluez-sim replaying captured
# frames): address -> (manufacturer, model, {value name: (device class, unit, accepted states)}).
FAMILIES = {
    # Govee H5075, two frames in turn (govee-ble's test frames): either frame's reading.
    "A4:C1:38:5E:DB:F8": ("Govee", "H5075", {
        "temperature": ("temperature", "°C", {21.6, 20.0}),
        "humidity": ("humidity", "%", {49.8, 64.9}),
        "battery": ("battery", "%", {100, 53}),
    }),
    # Xiaomi LYWSD03MMC, encrypted MiBeacon v5 opened with its bindkey (xiaomi-ble's test frame).
    "A4:C1:38:02:83:F4": ("Xiaomi", "LYWSD03MMC", {
        "humidity": ("humidity", "%", {46.7}),
    }),
}


async def phase_families(args, session) -> None:
    """SPEC §13 devices as Home Assistant shows them: manufacturer and model on the device, each
    value a sensor with its device class, unit, state class and the decoded reading."""
    ha = await connect(args, session)

    def ready(s: Snapshot) -> bool:
        return all(s.peripheral(a) and len(s.entities_of(s.peripheral(a))) >= len(values)
                   for a, (_, _, values) in FAMILIES.items())

    snap = await wait_settled(ha, ready, timeout=60)
    for address, (manufacturer, model, values) in FAMILIES.items():
        dev = snap.peripheral(address)
        what = f"{manufacturer} {model} ({address})"
        if dev is None:
            fail(f"device {what}", "not in HA's device registry")
            continue
        if dev.get("manufacturer") == manufacturer and dev.get("model") == model:
            ok(f"device {what}", f"name {dev.get('name')!r}, manufacturer {manufacturer!r}, model {model!r}")
        else:
            fail(f"device {what}", f"manufacturer {dev.get('manufacturer')!r}, model {dev.get('model')!r}")
        entries = snap.entities_of(dev)
        details = await entity_details(ha, entries)
        for name, (device_class, unit, accepted) in values.items():
            e = entity_matching(entries, snap, "sensor", device_class=device_class, unit=unit)
            if e is None:
                fail(f"{what} {name}", f"no sensor with device class {device_class} and unit {unit} among "
                     f"{[describe(x, snap) for x in entries]}")
                continue
            st = snap.state(e["entity_id"]) or {}
            attrs = st.get("attributes", {})
            state = st.get("state")
            try:
                reading = float(state)
            except (TypeError, ValueError):
                reading = None
            problems = []
            if attrs.get("state_class") != "measurement":
                problems.append(f"state_class {attrs.get('state_class')!r}")
            if reading is None or not any(abs(reading - v) < 1e-6 for v in accepted):
                problems.append(f"state {state!r}, expected one of {sorted(accepted)}")
            original = (details.get(e["entity_id"]) or {}).get("original_device_class") or attrs.get("device_class")
            if original != device_class:
                problems.append(f"device class {original!r}")
            if problems:
                fail(f"{what} {name}", f"{e['entity_id']}: " + "; ".join(problems))
            else:
                ok(f"{what} {name}", f"{e['entity_id']} = {state} {unit} (device class {device_class}, measurement)")
    await ha.close()


# ---------------------------------------------------------------------------------------------
# Devices with a profile (SPEC §15): a SwitchBot Bot's commands as buttons, an AM43 blind as a
# cover. HA's REST API calls the services (POST /api/services/...), as an automation would.


def xor8(data: bytes) -> int:
    out = 0
    for b in data:
        out ^= b
    return out


def am43_frame(command: int, payload: bytes) -> str:
    """An AM43 request: 00 ff 00 00 | 9a cmd len data | XOR of the bytes from 9a."""
    body = bytes([0x9A, command, len(payload)]) + payload
    return (bytes([0x00, 0xFF, 0x00, 0x00]) + body + bytes([xor8(body)])).hex()


def result_of(work: str, topic: str, after: int) -> list[dict]:
    return [json_payload(c[1]) for c in commands_log(work)[after:] if c[0] == topic]


async def call_rest_service(ha: HA, domain: str, service: str, data: dict) -> None:
    status, body = await ha.rest("POST", f"/api/services/{domain}/{service}", json=data)
    if status != 200:
        raise RuntimeError(f"POST /api/services/{domain}/{service} {data}: HTTP {status} {short(body)}")


async def service_writes(ha: HA, args, what: str, domain: str, service: str, data: dict, *,
                         address: str, uuid: str, frame: str, set_topic: str, set_payload, result_topic: str) -> None:
    """Calls `domain.service` through HA's REST API and checks the chain: HA publishes
    `set_topic` (payload accepted by `set_payload`), bluez-sim records `frame` written to `uuid`
    of `address`, and the bridge answers ok on `result_topic`."""
    before = len(writes_log(args.work))
    sent = len(commands_log(args.work))
    await call_rest_service(ha, domain, service, data)

    async def written():
        return [w for w in writes_log(args.work)[before:] if w[0] == address and w[1] == uuid16(uuid) and w[2] == frame]

    async def answered():
        return [r for r in result_of(args.work, result_topic, sent) if r.get("status")]

    got = await wait_for(written, 30)
    results = await wait_for(answered, 30)
    sets = [(c[0], bytes.fromhex(c[1]).decode("utf-8", "replace")) for c in commands_log(args.work)[sent:]
            if c[0].endswith("/set")]
    problems = []
    if not any(t == set_topic and set_payload(p) for t, p in sets):
        problems.append(f"HA published {sets or 'no .../set'}, want {set_topic}")
    if not got:
        problems.append(f"bluez-sim did not record {frame} to {uuid} of {address} within 30 s "
                        f"(writes since: {[w for w in writes_log(args.work)[before:] if w[0] == address]})")
    if not results or results[-1].get("status") != "ok":
        problems.append(f"{result_topic}: {results or 'nothing within 30 s'}, want status ok")
    if problems:
        fail(what, "; ".join(problems))
    else:
        shown = "; ".join(f"{t} {p}" for t, p in sets if t == set_topic)
        ok(what, f"{domain}.{service} {data}: {shown} -> bluez-sim wrote {frame} -> {result_topic} {results[-1]}")


def profile_device(snap: Snapshot, address: str, manufacturer: str, model: str, what: str) -> dict | None:
    dev = snap.peripheral(address)
    if dev is None:
        fail(f"device {what}", "not in HA's device registry")
        return None
    bridge = snap.bridge()
    problems = []
    if dev.get("manufacturer") != manufacturer or dev.get("model") != model:
        problems.append(f"manufacturer {dev.get('manufacturer')!r}, model {dev.get('model')!r}, "
                        f"want {manufacturer!r}, {model!r} (the profile's)")
    if bridge is None or dev.get("via_device_id") != bridge["id"]:
        problems.append(f"via_device_id {dev.get('via_device_id')} is not the bridge device")
    if problems:
        fail(f"device {what}", "; ".join(problems))
    else:
        ok(f"device {what}", f"name {dev.get('name')!r}, manufacturer {manufacturer!r}, model {model!r}, via the bridge")
    return dev


async def phase_profiles(args, session) -> None:
    ha = await connect(args, session)
    bot_name, blind_name = PROFILE_DEVICES[BOT][0], PROFILE_DEVICES[BLIND][0]

    def ready(s: Snapshot) -> bool:
        bot, blind = s.peripheral(BOT), s.peripheral(BLIND)
        return bool(bot and blind and any(platform_of(e) == "button" for e in s.entities_of(bot))
                    and any(platform_of(e) == "cover" for e in s.entities_of(blind)))

    snap = await wait_settled(ha, ready, timeout=60)
    for address in PROFILE_DEVICES:
        dev = snap.peripheral(address)
        for e in snap.entities_of(dev):
            note(f"  {dev.get('name')}: {describe(e, snap)}")

    # The Bot: a button per command without parameters; press writes 57 01 00 (no password).
    bot = profile_device(snap, BOT, "SwitchBot", "Bot (WoHand)", f"SwitchBot Bot ({BOT})")
    buttons = [e for e in snap.entities_of(bot) if platform_of(e) == "button"]
    press = entity_matching(buttons, snap, "button", uid="cmd_press")
    if press is None:
        fail("SwitchBot Bot press button", f"no button with cmd_press in its unique_id among "
             f"{[describe(e, snap) for e in buttons]}")
    else:
        ok("SwitchBot Bot press button", f"{press['entity_id']} [{press.get('unique_id')}] among "
           f"{[e['entity_id'] for e in buttons]}")
        await service_writes(
            ha, args, "SwitchBot Bot press through HA", "button", "press", {"entity_id": press["entity_id"]},
            address=BOT, uuid="cba20002-224d-11e6-9fb8-0002a5d5c51b", frame="570100",
            set_topic=f"ble/{bot_name}/command/press/set", set_payload=lambda p: json.loads(p or "null") == {},
            result_topic=f"ble/{bot_name}/command/press/result")

    # The blind: a cover (the profile's cover:), its battery a sensor, its position from the values.
    blind = profile_device(snap, BLIND, "A-OK", "AM43", f"AM43 blind ({BLIND})")
    entries = snap.entities_of(blind)
    details = await entity_details(ha, entries)
    bat = entity_matching(entries, snap, "sensor", device_class="battery", unit="%")
    st = snap.state(bat["entity_id"]) if bat else None
    if st and is_number(st["state"]) and float(st["state"]) == 81:
        ok("AM43 blind battery sensor", f"{bat['entity_id']} = 81 % (9a a2 answer)")
    else:
        fail("AM43 blind battery sensor", "want device class battery, unit %, state 81: "
             + (describe(bat, snap) if bat else f"none among {[describe(e, snap) for e in entries]}"))
    cover = entity_matching(entries, snap, "cover")
    if cover is None:
        fail("AM43 blind cover", f"no cover among {[describe(e, snap) for e in entries]}")
        await ha.close()
        return
    st = snap.state(cover["entity_id"]) or {}
    attrs = st.get("attributes", {})
    features = attrs.get("supported_features", 0)
    # CoverEntityFeature: OPEN 1, CLOSE 2, SET_POSITION 4, STOP 8.
    problems = [f"supported_features {features} lacks {name}" for bit, name in
                ((1, "open"), (2, "close"), (4, "set_position"), (8, "stop")) if not features & bit]
    # The simulated motor is at 0 (open), the profile turns it round: 100 in Home Assistant.
    if attrs.get("current_position") != 100 or st.get("state") != "open":
        problems.append(f"state {st.get('state')!r}, current_position {attrs.get('current_position')!r}, "
                        f"want open at 100 (motor position 0 in ble/{blind_name}/values)")
    device_class = (details.get(cover["entity_id"]) or {}).get("original_device_class")
    if problems:
        fail("AM43 blind cover", f"{cover['entity_id']}: " + "; ".join(problems))
    else:
        ok("AM43 blind cover", f"{cover['entity_id']} {st.get('state')} at {attrs.get('current_position')} "
           f"(from ble/{blind_name}/values), features {features}" + (f", device class {device_class}" if device_class else ""))

    # HA's position 30 is the motor's 70 (0x46): 00ff0000 9a 0d 01 46 + XOR(9a 0d 01 46) = d0.
    want = am43_frame(0x0D, bytes([70]))
    if want != "00ff00009a0d0146d0":
        fail("AM43 frame", f"the check computes {want} for position 70")
    await service_writes(
        ha, args, "AM43 blind set_cover_position 30 through HA", "cover", "set_cover_position",
        {"entity_id": cover["entity_id"], "position": 30},
        address=BLIND, uuid="fe51", frame=want,
        set_topic=f"ble/{blind_name}/command/position/set",
        set_payload=lambda p: json.loads(p or "null") == {"position": 30},
        result_topic=f"ble/{blind_name}/command/position/result")
    await service_writes(
        ha, args, "AM43 blind open_cover through HA", "cover", "open_cover", {"entity_id": cover["entity_id"]},
        address=BLIND, uuid="fe51", frame=am43_frame(0x0D, bytes([0])),
        set_topic=f"ble/{blind_name}/command/cover/set", set_payload=lambda p: p == "open",
        result_topic=f"ble/{blind_name}/command/cover/result")
    await ha.close()


# SPEC §14: scripts/homeassistant/pantry.yaml's thermometer, added at run time as "pantry" and renamed
# to "larder" by scripts/check-homeassistant (device/add, device/rename on ble/bridge/request/...).
PANTRY = "D0:5A:00:00:AA:01"


def load_state(args) -> dict:
    return json.load(open(args.state)) if os.path.exists(args.state) else {}


def save_state(args, state: dict) -> None:
    Path(args.state).write_text(json.dumps(state))


def parse_time(text: str) -> float:
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


async def history(ha: HA, entity_id: str, since: float) -> list[dict]:
    """The recorded states of `entity_id` since Unix time `since` (HA's history REST API), oldest first."""
    from datetime import datetime, timezone
    start = datetime.fromtimestamp(since, timezone.utc).isoformat()
    status, body = await ha.rest(
        "GET", f"/api/history/period/{start}",
        params={"filter_entity_id": entity_id, "minimal_response": "", "no_attributes": "",
                "significant_changes_only": "0"})
    if status != 200 or not isinstance(body, list):
        raise RuntimeError(f"GET /api/history/period for {entity_id}: {status} {short(body)}")
    return body[0] if body else []


def numeric_states(states: list[dict]) -> list[tuple[float, float]]:
    """(time of the state, value) of the numeric states."""
    out = []
    for st in states:
        if is_number(st.get("state")) and st.get("last_changed"):
            out.append((parse_time(st["last_changed"]), float(st["state"])))
    return out


async def pantry_entities(ha: HA) -> tuple[Snapshot, dict | None, list]:
    snap = await ha.snapshot()
    device = snap.peripheral(PANTRY)
    return snap, device, snap.entities_of(device)


async def phase_rename_before(args, session) -> None:
    """The device added at run time as "pantry": its temperature entity has values, and HA records them."""
    ha = await connect(args, session)
    t0 = time.monotonic()
    while True:
        snap, device, entries = await pantry_entities(ha)
        temp = entity_matching(entries, snap, "sensor", device_class="temperature")
        st = snap.state(temp["entity_id"]) if temp else None
        if (st and is_number(st["state"])) or time.monotonic() - t0 > 60:
            break
        await asyncio.sleep(0.5)
    what = "run-time device pantry (device/add) in Home Assistant"
    if temp is None or not st or not is_number(st["state"]):
        fail(what, f"after 60 s: device {short(device)}, entities {[describe(e, snap) for e in entries]}")
        await ha.close()
        return
    ok(what, f"{describe(temp, snap)} within {time.monotonic() - t0:.1f} s")
    # At least three values recorded before the rename.
    since = time.time() - 600
    states = await wait_for(lambda: recorded(ha, temp["entity_id"], since, 3), 30, 1.0)
    what = "pantry's temperature history recorded"
    if not states:
        fail(what, f"fewer than 3 numeric states in {temp['entity_id']}'s history after 30 s: "
                   f"{short(await history(ha, temp['entity_id'], since))}")
    else:
        ok(what, f"{len(states)} states of {temp['entity_id']}")
    state = load_state(args)
    state["pantry"] = {"entity_id": temp["entity_id"], "unique_id": temp.get("unique_id"), "device_id": device["id"],
                       "entities": {e.get("unique_id"): e["entity_id"] for e in entries},
                       "since": since, "renamed_after": time.time()}
    save_state(args, state)
    await ha.close()


async def recorded(ha: HA, entity_id: str, since: float, count: int):
    states = numeric_states(await history(ha, entity_id, since))
    return states if len(states) >= count else None


async def phase_rename_after(args, session) -> None:
    """After device/rename pantry -> larder: the same entities (unique_ids, entity ids, device), the discovery
    config now on ble/larder/..., new values, and the history from before the rename still there."""
    saved = load_state(args).get("pantry")
    if not saved:
        fail("rename keeps the entity", "no pantry entity was recorded before the rename")
        return
    ha = await connect(args, session)
    eid, uid, renamed = saved["entity_id"], saved["unique_id"], saved["renamed_after"]

    async def moved():
        snap, device, entries = await pantry_entities(ha)
        configs = await discovery_configs_of(ha, device)
        config = configs.get(eid, {}).get("payload", {})
        topic = config.get("state_topic") or config.get("stat_t") or ""
        return (snap, device, entries, topic) if topic.startswith("ble/larder/") else None

    async def fresh():
        """The entity's state once a value arrived after HA took the new config (it listens to ble/larder/ only)."""
        status, st = await ha.rest("GET", f"/api/states/{eid}")
        if status != 200 or not isinstance(st, dict) or not is_number(st.get("state")):
            return None
        stamps = [parse_time(st[k]) for k in ("last_reported", "last_updated", "last_changed") if st.get(k)]
        return st if stamps and max(stamps) > switched else None

    t0 = time.monotonic()
    found = await wait_for(moved, 60, 0.5)
    switched = time.time()
    st = await wait_for(fresh, 30, 0.5) if found else None
    what = "rename: the entity follows the device to ble/larder/"
    if not found or not st:
        snap, device, entries = await pantry_entities(ha)
        configs = await discovery_configs_of(ha, device)
        why = "no new value after the config moved (30 s)" if found else "the config did not move (60 s)"
        fail(what, f"{why}: {eid} state {short(snap.state(eid))}, discovery {short(configs.get(eid))}")
        await ha.close()
        return
    snap, device, entries, topic = found
    ok(what, f"{eid} state_topic {topic}, a new state {st.get('state')} within {time.monotonic() - t0:.1f} s")

    what = "rename keeps the entities (unique_id, entity id, device)"
    now = {e.get("unique_id"): e["entity_id"] for e in entries}
    matching = [e for e in snap.entities if e.get("unique_id") == uid]
    problems = []
    if len(matching) != 1 or matching[0]["entity_id"] != eid:
        problems.append(f"unique_id {uid}: {[e['entity_id'] for e in matching]}, expected [{eid}]")
    if device is None or device["id"] != saved["device_id"]:
        problems.append(f"another device: {short(device)}")
    if now != saved["entities"]:
        problems.append(f"the device's entities were {saved['entities']}, now {now}")
    larder = [e["entity_id"] for e in snap.entities if "larder" in e["entity_id"]]
    if larder:
        problems.append(f"new entities named after the new segment: {larder}")
    if problems:
        fail(what, "; ".join(problems))
    else:
        ok(what, f"{len(now)} entities, {eid} [{uid}]")

    what = "rename keeps the history"

    async def split():
        before, after = await split_history(ha, eid, saved["since"], renamed, switched)
        return (before, after) if len(before) >= 3 and after else None

    found = await wait_for(split, 30, 1.0)
    before, after = found or await split_history(ha, eid, saved["since"], renamed, switched)
    if found:
        ok(what, f"{eid}: {len(before)} states before the rename, {len(after)} since HA took the new topic")
    else:
        fail(what, f"{eid}: {len(before)} numeric states before the rename (want >= 3), {len(after)} since HA took "
                   "the new topic (want >= 1)")
    await ha.close()


async def split_history(ha: HA, eid: str, since: float, renamed: float, switched: float):
    """The numeric states recorded before the rename, and those after HA took the new topic."""
    states = numeric_states(await history(ha, eid, since))
    return [s for s in states if s[0] < renamed], [s for s in states if s[0] > switched]


async def discovery_configs_of(ha: HA, device: dict | None) -> dict[str, dict]:
    """entity_id -> {"topic", "payload"} of one device's entities (mqtt/device/debug_info)."""
    out = {}
    if device is None:
        return out
    try:
        info = await ha.call("mqtt/device/debug_info", device_id=device["id"])
    except RuntimeError:
        return out
    for ent in info.get("entities", []):
        data = ent.get("discovery_data") or {}
        payload = data.get("payload")
        if isinstance(payload, str):
            try:
                payload = json.loads(payload)
            except ValueError:
                payload = {}
        out[ent["entity_id"]] = {"topic": data.get("topic"), "payload": payload or {}}
    return out


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("phase")
    parser.add_argument("files", nargs="*")
    parser.add_argument("--url", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--mqtt-port", type=int, required=True)
    parser.add_argument("--work", default="/check")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    if args.phase == "log":
        phase_log(args.files)
        return 1 if failures else 0
    phases = {"setup": phase_setup, "discovery": phase_discovery, "bridge-stopped": phase_bridge_stopped,
              "bridge-started": phase_bridge_started, "ha-restarted": phase_ha_restarted,
              "legacy-before": phase_legacy_before, "legacy-after": phase_legacy_after,
              "families": phase_families, "profiles": phase_profiles,
              "rename-before": phase_rename_before, "rename-after": phase_rename_after,
              "tracker-home": lambda a, s: phase_tracker(a, s, "home"),
              "tracker-away": lambda a, s: phase_tracker(a, s, "not_home")}
    async with aiohttp.ClientSession() as session:
        try:
            await phases[args.phase](args, session)
        except (RuntimeError, TimeoutError, aiohttp.ClientError, asyncio.TimeoutError, OSError) as error:
            fail(args.phase, f"{type(error).__name__}: {error}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
