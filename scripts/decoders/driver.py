#!/usr/bin/env python3
"""Differential check of the advertisement families (SPEC §13) against reference decoders.

Run by scripts/check-decoders (which builds ble-decode and the venv); by hand:

    VENV/bin/python scripts/decoders/driver.py BLE_DECODE [--family NAME] [--seed S] [--flips N]

Every `scripts/decoders/*.py` but this file (and files starting with `_`) is an adapter:

    REQUIRES = ["xiaomi-ble==0.33.0"]   # pip requirements of the reference, pinned
    def frames(): ...                    # list of frames (the shape below)
    def reference(frame): ...            # {"values": {our names: ...}, "model": str|None} or None;
                                         # optional "manufacturer", "packet_id", "encrypted",
                                         # "counter": compared when given (not None)

    frame = {"address": "A4:C1:38:00:00:01", "name": str|None, "service_data": {"fe95": "hex"},
             "manufacturer_data": {"0x0969": "hex after the company id"}, "service_uuids": ["fee5"],
             "key": "hex"|None, "source": "where the frame comes from"}

Optional adapter attributes:
    DECODER = "xiaomi" or ["pvvx", "atc1441"]   our decoder names for its frames (default: the file's name)
    TOLERANCE = {"temperature": 0.05}           absolute tolerance per value name, where the
                                                reference rounds (say why in the adapter)
    OURS_ONLY = {"packet_id_x"}                 value names we report and the reference cannot
                                                (present in ours only: not a disagreement)
    THEENGS = False                             do not compare this family with TheengsDecoder (only
                                                where TheengsDecoder is the reference itself: pvvx)
    THEENGS_IGNORE = {"accx", "temperature"}    TheengsDecoder keys (or our value names) never compared
                                                (where it misreads the key on every frame)
    THEENGS_TOLERANCE = {"humidity": 0.01}      absolute tolerance per value name against TheengsDecoder
    THEENGS_KEYS = {"mov": ("movement_counter", 1)}  TheengsDecoder keys mapped otherwise for this
                                                family (our name, factor: ours = its value × factor)
    THEENGS_EXCEPTIONS = [TheengsException(...)] values not compared on the frames where
                                                TheengsDecoder is wrong by the format: per model
                                                (its model_id) and key, with a predicate on the frame
                                                (see TheengsException); every other value is compared.
                                                Each one is counted in the report, by its label.

Per family:
  1. pip-installs REQUIRES into the venv this runs in, under an exclusive flock of VENV.lock
     (a requirement that cannot be installed FAILS the family); the checks then hold a shared
     lock, so that no one re-installs packages under them.
  2. The frames: each through ble-decode (one process for all frames and mutations) and
     through reference(frame). Where the reference decodes, ours must decode with the family's
     decoder name, the same value names (except OURS_ONLY), numbers within 1e-6 relative or
     1e-9 absolute (math.isclose; the formats' finest resolution is 0.001-0.01 of a unit, far
     above that; TOLERANCE widens it per value), booleans and strings equal, every number
     finite, and the model equal when the reference names one. Where the reference refuses
     (None), ours must not decode (decoder null or an error).
  3. Mutations of every frame (fixed seed): every truncation of each service / manufacturer
     data value, and --flips random single-bit flips. ble-decode must not crash (exit status 0
     and one output line per input); ours must not decode a mutation the reference refuses;
     where both decode, they must agree as in 2. (Ours refusing a mutation the reference
     accepts is counted as "stricter", not a disagreement: the references check little.)
     A reference that raises on a mutation refuses it (counted).
  4. TheengsDecoder (when importable) against every frame of the family it recognises: its
     keys mapped to ours (tempc -> temperature, hum -> humidity, ...) and compared where both
     have the value; which models it covered is listed. A value that differs is a disagreement.

Prints per family: frames, mutations, agreements, disagreements (each with its frame), and a last
line "check-decoders: families PASS|FAIL (...)". Exits 1 on any disagreement or failure.
"""
import argparse
import ast
import fcntl
import importlib.metadata
import importlib.util
import json
import logging
import math
import os
import random
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
LOCK = os.environ.get("DECODER_VENV_LOCK") or (sys.prefix.rstrip("/") + ".lock")
REL_TOL, ABS_TOL = 1e-6, 1e-9

# TheengsDecoder's keys -> ours (SPEC §7 / §13), with a factor where the unit differs.
THEENGS_KEYS = {
    "tempc": ("temperature", 1), "tempc1": ("temperature_probe_1", 1), "tempc2": ("temperature_probe_2", 1),
    "tempc3": ("temperature_probe_3", 1), "tempc4": ("temperature_probe_4", 1),
    "tempc5": ("temperature_probe_5", 1), "tempc6": ("temperature_probe_6", 1),
    "hum": ("humidity", 1), "batt": ("battery", 1), "volt": ("voltage", 1), "moi": ("moisture", 1),
    "fer": ("conductivity", 1), "lux": ("illuminance", 1), "co2": ("co2", 1), "pm25": ("pm2_5", 1),
    "pm10": ("pm10", 1), "tvoc": ("tvoc", 1), "for": ("formaldehyde", 1), "weighing_mode": None,
    "weight": ("weight", 1), "dewpointc": ("dew_point", 1), "pres": ("pressure", 1),
    "accx": ("acceleration_x", 1), "accy": ("acceleration_y", 1), "accz": ("acceleration_z", 1),
    "movecnt": ("movement_counter", 1), "mov": ("motion", None), "motion": ("motion", None),
    "lowbatt": ("battery_low", None),
}


class TheengsException:
    """A TheengsDecoder value not compared on some frames, because the format says it is wrong there.

    models: its model_ids (None: any); keys: its keys (or our value names); when(frame, theirs,
    key) -> bool: whether it misreads `key` in this frame (default: in every frame of those
    models), given the adapter's frame and TheengsDecoder's whole reading; label: the
    short name the report counts it under; the reason (who is right, from the format) goes in the
    adapter's comment next to it."""

    def __init__(self, label, keys, models=None, when=None):
        self.label, self.keys = label, set(keys)
        self.models = None if models is None else set(models)
        self.when = when

    def applies(self, model, key, name, frame, theirs):
        if self.models is not None and model not in self.models:
            return False
        if key not in self.keys and name not in self.keys:
            return False
        return self.when is None or bool(self.when(frame, theirs, key))


class Lock:
    """flock(2) on the venv's lock file (the same lock `flock VENV.lock ...` takes)."""

    def __init__(self):
        self.fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)

    def exclusive(self):
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def shared(self):
        fcntl.flock(self.fd, fcntl.LOCK_SH)

    def release(self):
        fcntl.flock(self.fd, fcntl.LOCK_UN)


def requires_of(path):
    """REQUIRES of an adapter, read without importing it (its imports may need them)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "REQUIRES" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def satisfied(requirement):
    """Whether a pinned requirement `name==version` (or a bare name) is installed."""
    name, _, version = requirement.partition("==")
    name = name.split("[")[0].strip()
    try:
        installed = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return not version or installed == version.strip()


def install(requires):
    """pip-installs what is missing (caller holds the exclusive lock); an error message or None."""
    missing = [r for r in requires if not satisfied(r)]
    if not missing:
        return None
    print(f"  installing {' '.join(missing)}", flush=True)
    result = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install", *missing],
                            capture_output=True, text=True)
    importlib.invalidate_caches()
    if result.returncode != 0:
        return f"pip install {' '.join(missing)} failed:\n" + (result.stderr or result.stdout)[-2000:]
    still = [r for r in missing if not satisfied(r)]
    if still:
        return f"pip install did not give {still}"
    return None


def load(path, name):
    spec = importlib.util.spec_from_file_location(f"adapter_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def frame_line(frame):
    keep = {k: frame.get(k) for k in ("address", "name", "service_data", "manufacturer_data", "service_uuids", "key")}
    return json.dumps(keep, separators=(",", ":"))


def run_decoder(binary, lines):
    """ble-decode's outputs for `lines`, or raises Crash with the lines that crash it."""
    result = subprocess.run([binary], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=1800)
    outputs = parse_outputs(result.stdout)
    if result.returncode == 0 and outputs is not None and len(outputs) == len(lines):
        return outputs
    # Find the culprits: chunks, then line by line.
    crashing = []
    def bisect(chunk):
        r = subprocess.run([binary], input="\n".join(chunk) + "\n", capture_output=True, text=True, timeout=600)
        out = parse_outputs(r.stdout)
        if r.returncode == 0 and out is not None and len(out) == len(chunk):
            return
        if len(chunk) == 1:
            crashing.append((chunk[0], f"exit {r.returncode}: {r.stderr.strip()[-400:]}"))
            return
        mid = len(chunk) // 2
        bisect(chunk[:mid])
        bisect(chunk[mid:])
    bisect(lines)
    raise Crash(result.returncode, crashing or [("(whole input)", f"exit {result.returncode}, {len(outputs or [])} of {len(lines)} outputs")])


class Crash(Exception):
    def __init__(self, code, lines):
        super().__init__(code)
        self.code, self.lines = code, lines


def parse_outputs(text):
    try:
        return [json.loads(line) for line in text.splitlines()]
    except ValueError:
        return None


def close(ours, theirs, tolerance):
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return ours is theirs
    if isinstance(theirs, (int, float)) and isinstance(ours, (int, float)):
        if not math.isfinite(ours):
            return False
        return math.isclose(ours, theirs, rel_tol=REL_TOL, abs_tol=max(ABS_TOL, tolerance or 0))
    return ours == theirs


def compare(ours, theirs, adapter, decoders, rounded=None):
    """Why `ours` (ble-decode's output) and `theirs` (reference()) disagree, or None."""
    if theirs is None:
        if ours.get("decoder") is not None and "error" not in ours:
            return "the reference refuses this frame, we decode it"
        return None
    if "error" in ours:
        return f"the reference decodes this frame, ours fails: {ours['error']} ({ours.get('message')})"
    if ours.get("decoder") is None:
        return "the reference decodes this frame, no decoder of ours claims it"
    if ours["decoder"] not in decoders:
        return f"decoded by our {ours['decoder']!r}, not {'/'.join(decoders)}"
    problems = []
    values, want = ours.get("values") or {}, theirs.get("values") or {}
    tolerance = getattr(adapter, "TOLERANCE", {})
    ours_only = set(getattr(adapter, "OURS_ONLY", ()))
    for name, value in values.items():
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            problems.append(f"{name} is not a finite number ({value!r})")
    only_ours = sorted(set(values) - set(want) - ours_only)
    only_theirs = sorted(set(want) - set(values))
    if only_ours or only_theirs:
        problems.append(f"names differ: ours only {only_ours}, reference only {only_theirs}")
    for name in want:
        if name in values and not close(values[name], want[name], tolerance.get(name)):
            problems.append(f"{name}: ours {values[name]!r}, reference {want[name]!r}")
        elif rounded is not None and name in values and not close(values[name], want[name], None):
            rounded[name] = rounded.get(name, 0) + 1  # agreed only within the adapter's TOLERANCE
    if theirs.get("model") is not None and ours.get("model") != theirs["model"]:
        problems.append(f"model: ours {ours.get('model')!r}, reference {theirs['model']!r}")
    for key in ("manufacturer", "packet_id", "encrypted", "counter"):
        if theirs.get(key) is not None and ours.get(key) != theirs[key]:
            problems.append(f"{key}: ours {ours.get(key)!r}, reference {theirs[key]!r}")
    return "; ".join(problems) or None


def mutations(frame, rng, flips):
    """Every truncation of each data value, and `flips` single-bit flips, as (label, frame)."""
    parts = [("service_data", k) for k in (frame.get("service_data") or {})] + \
            [("manufacturer_data", k) for k in (frame.get("manufacturer_data") or {})]
    out = []
    def with_bytes(kind, key, data):
        copy = dict(frame)
        copy[kind] = dict(frame[kind])
        copy[kind][key] = data.hex()
        return copy
    for kind, key in parts:
        data = bytes.fromhex(frame[kind][key])
        for n in range(len(data)):
            out.append((f"{kind}[{key}] truncated to {n} bytes", with_bytes(kind, key, data[:n])))
    sized = [(kind, key) for kind, key in parts if frame[kind][key]]
    for _ in range(flips if sized else 0):
        kind, key = rng.choice(sized)
        data = bytearray.fromhex(frame[kind][key])
        bit = rng.randrange(8 * len(data))
        data[bit // 8] ^= 1 << (bit % 8)
        out.append((f"{kind}[{key}] bit {bit} flipped", with_bytes(kind, key, bytes(data))))
    return out


def call_reference(adapter, frame):
    """(reading or None, exception text or None)."""
    try:
        return adapter.reference(frame), None
    except Exception as error:  # a reference that raises refuses the frame
        return None, f"{type(error).__name__}: {error}"


def theengs_input(frame):
    """TheengsDecoder's inputs for a frame: one per service data value (it takes one), with the
    manufacturer data (company id first, little endian, as on the air) and the name."""
    base = {"id": frame["address"].upper()}
    if frame.get("name"):
        base["name"] = frame["name"]
    manufacturer = frame.get("manufacturer_data") or {}
    if manufacturer:
        key, data = next(iter(manufacturer.items()))
        cid = int(key, 16) if key.lower().startswith("0x") else int(key)
        base["manufacturerdata"] = cid.to_bytes(2, "little").hex() + data
    if frame.get("service_uuids"):
        base["uuid"] = frame["service_uuids"][0]
    inputs = []
    for uuid, data in (frame.get("service_data") or {}).items():
        one = dict(base)
        one["servicedata"] = data
        one["servicedatauuid"] = "0x" + uuid[-4:].lower() if len(uuid) <= 8 else "0x" + uuid[4:8].lower()
        inputs.append(one)
    return inputs or [base]


def theengs_check(theengs, frame, ours, report, adapter=None):
    """Compares TheengsDecoder's reading of `frame` with ours; returns its model or None."""
    for query in theengs_input(frame):
        try:
            text = theengs.decodeBLE(json.dumps(query))
        except Exception:
            continue
        if not text:
            continue
        theirs = json.loads(text)
        model = theirs.get("model_id") or theirs.get("model")
        if "error" in ours or ours.get("decoder") is None:
            report.theengs_only.append((frame, model))
            return model
        values = ours.get("values") or {}
        ignore = set(getattr(adapter, "THEENGS_IGNORE", ()))
        tolerance = getattr(adapter, "THEENGS_TOLERANCE", {})
        exceptions = getattr(adapter, "THEENGS_EXCEPTIONS", ())
        keys = {**THEENGS_KEYS, **getattr(adapter, "THEENGS_KEYS", {})}
        for key, value in theirs.items():
            mapped = keys.get(key)
            if not mapped or mapped[0] not in values or key in ignore or mapped[0] in ignore:
                continue
            name, factor = mapped
            excepted = next((e for e in exceptions if e.applies(model, key, name, frame, theirs)), None)
            if excepted is not None:
                report.theengs_excepted[excepted.label] = report.theengs_excepted.get(excepted.label, 0) + 1
                continue
            want = value if factor is None else (value * factor if isinstance(value, (int, float)) and not isinstance(value, bool) else value)
            mine = values[name]
            if isinstance(mine, bool) or factor is None:
                ok = bool(mine) == bool(want)
            else:
                ok = isinstance(want, (int, float)) and close(mine, want, tolerance.get(name))
                if ok and not close(mine, want, None):
                    report.theengs_rounded[name] = report.theengs_rounded.get(name, 0) + 1
            report.theengs_compared += 1
            if not ok:
                report.disagree(frame, f"TheengsDecoder ({model}) {key}={value!r}, ours {name}={mine!r}", ours)
        return model
    return None


class Report:
    def __init__(self, name):
        self.name = name
        self.frames = self.mutations = self.agreements = 0
        self.refused = self.stricter = self.reference_raised = 0
        self.disagreements = []
        self.failure = None
        self.theengs_models = {}
        self.theengs_only = []
        self.theengs_compared = 0
        self.theengs_excepted = {}
        self.theengs_rounded = {}
        self.rounded = {}
        self.we_refuse = 0
        self.our_models = {}
        self.theengs_off = False

    def disagree(self, frame, why, ours, what="frame"):
        self.disagreements.append((what, frame, why, ours))


def check_family(name, path, binary, args, theengs):
    report = Report(name)
    adapter = load(path, name)
    report.theengs_off = not getattr(adapter, "THEENGS", True) or theengs is None
    decoders = getattr(adapter, "DECODER", name)
    decoders = [decoders] if isinstance(decoders, str) else list(decoders)
    frames = list(adapter.frames())
    refused_by_format = getattr(adapter, "WE_REFUSE", {})
    report.we_refuse = sum(1 for f in frames if f.get("source") in refused_by_format)
    rng = random.Random(f"{args.seed}:{name}")
    work = []  # (kind, frame, label)
    for frame in frames:
        work.append(("frame", frame, None))
        for label, mutated in mutations(frame, rng, args.flips):
            work.append(("mutation", mutated, label))
    lines = [frame_line(f) for _, f, _ in work]
    try:
        outputs = run_decoder(binary, lines)
    except Crash as crash:
        report.failure = "ble-decode crashed:\n" + "\n".join(f"      {line}\n        {why}" for line, why in crash.lines)
        return report
    for (kind, frame, label), ours in zip(work, outputs):
        theirs, raised = call_reference(adapter, frame)
        if kind == "frame":
            report.frames += 1
            if raised:
                report.disagree(frame, f"the reference raised on an original frame: {raised}", ours)
                continue
        else:
            report.mutations += 1
            if raised:
                report.reference_raised += 1
        if ours.get("error") == "bad_input":
            report.disagree(frame, f"ble-decode cannot read the frame: {ours.get('message')}", ours, label or kind)
            continue
        if kind == "mutation" and theirs is not None and (ours.get("decoder") is None or "error" in ours):
            report.stricter += 1
            continue
        why = compare(ours, theirs, adapter, decoders, report.rounded if kind == "frame" else None)
        if why:
            report.disagree(frame, why, ours, label or kind)
            continue
        report.agreements += 1
        if theirs is None:
            report.refused += 1
        elif kind == "frame":
            key = ours.get("model") or "(no model)"
            report.our_models[key] = report.our_models.get(key, 0) + 1
        if kind == "frame" and theengs is not None and getattr(adapter, "THEENGS", True):
            model = theengs_check(theengs, frame, ours, report, adapter)
            if model:
                report.theengs_models[model] = report.theengs_models.get(model, 0) + 1
    return report


# The fuzz target `families` (Sources/ble-mqtt-bridge-fuzz/FamilyFuzzing.swift) reads its input
# through these tables: keep them in step with it.
FUZZ_SERVICE = ["fe95", "fdcd", "fd3d", "0d00", "fcd2", "181a"]
FUZZ_COMPANY = [0x0969, 0x0499, 0x0133, 0x0059, 0x02E1, 0xEC88, 0x0001, 0x8801, 0x004C, 0x0006]
FUZZ_NAMES = ["GVH5075_1234", "Govee_H5179_AB12", "sps", "tps", "iBBQ", "TP357 (2B54)", "TP393 (7A1F)",
              "SensorPush HT.w 0CA1", "SensorPush HTP.xw F4D", "Ruuvi 1A2B", "LYWSD03MMC", "WoSensorTH",
              "Flower care", "IBS-TH"]

# Seeds for the fuzz target besides the adapters' frames: (label, frame), one or two per family,
# captures from the references' test suites (as the adapters carry them; the SwitchBot
# frame on 0d00 made up after the format).
FUZZ_BUILTIN = [
    ("xiaomi-lywsdcgq", {"address": "58:2D:34:3B:2E:BF", "service_data": {"fe95": "5020aa01a3bf2e3b342d580d1004b40095020a10013b"}}),
    ("xiaomi-cgg1-encrypted", {"address": "5A:58:2D:34:12:5F", "service_data": {"fe95": "5858480b685f12342d585a0b1841e2aa000e00a4964fb5"},
                               "key": "814aac74c4f17b6c1581e1ab87816b99"}),
    ("xiaomi-miflora", {"address": "C4:7C:8D:6A:3E:7A", "service_data": {"fe95": "71209800687a3e6a8d7cc40d0910025702"},
                        "name": "Flower care"}),
    ("qingping-cgpr1", {"service_data": {"fdcd": "4812cdd560342d580804000d00000f01ee"}, "name": "Qingping Motion & Light"}),
    ("govee-h5075", {"address": "A4:C1:38:DD:DB:F8", "manufacturer_data": {"0xec88": "00034db26400"}, "name": "GVH5075_DBF8"}),
    ("govee-h5179", {"manufacturer_data": {"0x8801": "ec0001010a0aa40664"}, "name": "Govee_H5179_3CD5"}),
    ("switchbot-meter", {"service_data": {"0d00": "54006405962d"}, "name": "WoSensorTH"}),
    ("switchbot-meter-manufacturer", {"address": "C0:21:9A:E8:BC:05", "service_data": {"fd3d": "5400e4069835"},
                                      "manufacturer_data": {"0x0969": "d7c17d5deb43de03069835"}}),
    ("ruuvi-v5", {"manufacturer_data": {"0x0499": "0512fc5394c37c0004fffc040cac364200cdcbb8334c884f"}}),
    ("ruuvi-v3", {"manufacturer_data": {"0x0499": "03291a1ece1efc18f94202ca0b53"}}),
    ("inkbird-ibs-th", {"manufacturer_data": {"0x07fc": "c71200c83d5606"}, "name": "sps"}),
    ("thermopro-tp357", {"manufacturer_data": {"0xf1c2": "001d022c"}, "name": "TP357 (2142)"}),
    ("sensorpush-htw", {"manufacturer_data": {"0x9a04": "c9a546"}, "name": "SensorPush HT.w 0CA1"}),
    ("bluemaestro-tempo", {"manufacturer_data": {"0x0133": "17560e10177000ef01b3006c0100"}}),
    ("mopeka-pro", {"address": "C9:F3:32:E0:F5:09", "manufacturer_data": {"0x0059": "0872460040e0f509f0d8"},
                    "service_uuids": ["fee5"]}),
    ("victron-smartshunt", {"manufacturer_data": {"0x02e1": "100289a302b040af925d09a4d89aa0128bdef48c6298a9"},
                            "key": "aff4d0995b7d1e176c0c33ecb9e70dcd"}),
]


def fuzz_seed(frame):
    """The `families` fuzz target's input for a frame (see FamilyFuzzing.swift), or None."""
    service = next(iter((frame.get("service_data") or {}).items()), None)
    company = next(iter((frame.get("manufacturer_data") or {}).items()), None)
    select = 0
    if service:
        uuid = service[0].lower()[-4:] if len(service[0]) <= 8 else service[0].lower()[4:8]
        if uuid not in FUZZ_SERVICE:
            service = None
        else:
            select |= FUZZ_SERVICE.index(uuid) + 1
    extra = b""
    if company:
        cid = int(company[0], 16) if company[0].lower().startswith("0x") else int(company[0])
        if cid in FUZZ_COMPANY:
            select |= (FUZZ_COMPANY.index(cid) + 1) << 4
        else:
            select |= 15 << 4
            extra = cid.to_bytes(2, "little")
    if not service and not company:
        return None
    options = 0
    name = frame.get("name")
    if name:
        exact = [n for n in FUZZ_NAMES if n == name]
        near = exact or [n for n in FUZZ_NAMES if n[:4].lower() == name[:4].lower()]
        if near:
            options |= FUZZ_NAMES.index(near[0]) + 1
    if "fee5" in [u.lower()[-4:] if len(u) <= 8 else u.lower()[4:8] for u in frame.get("service_uuids") or []]:
        options |= 0x10
    key = bytes.fromhex(frame["key"]) if frame.get("key") else b""
    if key:
        options |= {16: 1, 12: 2}.get(len(key), 3) << 5
        key = key[:{16: 16, 12: 12}.get(len(key), 5)].ljust({16: 16, 12: 12}.get(len(key), 5), b"\0")
    address = bytes.fromhex(frame.get("address", "A4:C1:38:00:00:01").replace(":", ""))
    data = b""
    service_bytes = bytes.fromhex(service[1].replace(" ", "")) if service else b""
    company_bytes = bytes.fromhex(company[1].replace(" ", "")) if company else b""
    if service and company:
        data = bytes([len(service_bytes)]) + service_bytes + company_bytes
        if len(service_bytes) >= len(data):
            return None
    else:
        data = service_bytes + company_bytes
    return bytes([select, options]) + address + extra + key + data


def write_fuzz_seeds(directory, adapters):
    """Seeds for the `families` fuzz target: every adapter's frames (up to 40 each, spread over
    its list) and FUZZ_BUILTIN, named `family-<adapter>-<sha1 of the bytes>` (so that branches
    writing seeds of different families, or the same seed, do not collide). The seeds of the
    adapters written (and the builtin ones) are replaced; other files are left alone."""
    import hashlib
    os.makedirs(directory, exist_ok=True)
    prefixes = tuple(f"family-{name}-" for name in ["builtin", *adapters])
    for entry in os.listdir(directory):
        if entry.startswith(prefixes):
            os.remove(os.path.join(directory, entry))
    count = 0
    def write(prefix, seed):
        nonlocal count
        with open(os.path.join(directory, f"family-{prefix}-{hashlib.sha1(seed).hexdigest()[:16]}"), "wb") as out:
            out.write(seed)
        count += 1
    for label, frame in FUZZ_BUILTIN:
        write("builtin", fuzz_seed({"address": "A4:C1:38:12:34:56", **frame}))
    for name, path in adapters.items():
        frames = list(load(path, name).frames())
        step = max(1, len(frames) // 40)
        for frame in frames[::step][:40]:
            seed = fuzz_seed(frame)
            if seed is not None:
                write(name, seed)
    print(f"{count} seeds written to {directory}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", help="the ble-decode executable")
    parser.add_argument("--family", action="append", help="check only this family (the adapter's file name); repeatable")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--flips", type=int, default=24, help="random bit flips per frame (default 24)")
    parser.add_argument("--max-listed", type=int, default=None,
                        help="list at most N disagreements per family (default: all; all are counted)")
    parser.add_argument("--write-fuzz-seeds", metavar="DIR",
                        help="write seeds for the `families` fuzz target (Tests/fuzz/corpus/families) and exit")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)

    adapters = {}
    for entry in sorted(os.listdir(HERE)):
        if entry.endswith(".py") and entry != "driver.py" and not entry.startswith("_"):
            adapters[entry[:-3]] = os.path.join(HERE, entry)
    if args.family:
        unknown = [f for f in args.family if f not in adapters]
        if unknown:
            print(f"check-decoders: FAIL: no adapter scripts/decoders/{unknown[0]}.py (have: {', '.join(adapters) or 'none'})")
            return 1
        adapters = {f: adapters[f] for f in args.family}
    if args.write_fuzz_seeds:
        write_fuzz_seeds(args.write_fuzz_seeds, adapters)
        return 0
    if not adapters:
        print("check-decoders: families: no adapters in scripts/decoders")
        return 0

    lock = Lock()
    lock.exclusive()
    failures = {}
    installed_any = [False]
    for name, path in adapters.items():
        try:
            requires = requires_of(path)
            installed_any[0] |= not all(satisfied(r) for r in requires)
            error = install(requires)
        except Exception as e:
            error = f"cannot read REQUIRES: {e}"
        if error:
            failures[name] = "reference not installable: " + error
    if installed_any[0]:
        check = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "check"],
                               capture_output=True, text=True)
        if check.returncode != 0:
            print("check-decoders: WARNING pip check after the installs:\n  " + check.stdout.strip().replace("\n", "\n  "))
    # A later family's pins may have replaced an earlier one's: every family's must hold now.
    for name, path in adapters.items():
        if name not in failures:
            broken = [r for r in requires_of(path) if not satisfied(r)]
            if broken:
                failures[name] = f"requirements conflict in the shared venv: {broken} no longer installed as pinned"
    lock.shared()
    try:
        import TheengsDecoder as theengs
    except Exception:
        theengs = None
        print("check-decoders: NOTE TheengsDecoder is not importable: families are not compared with it")

    reports = []
    for name, path in adapters.items():
        if name in failures:
            report = Report(name)
            report.failure = failures[name]
        else:
            try:
                report = check_family(name, path, args.binary, args, theengs)
            except Exception:
                report = Report(name)
                report.failure = "the adapter failed:\n" + traceback.format_exc()
        reports.append(report)
        print_report(report, args.max_listed)
    lock.release()

    total_frames = sum(r.frames for r in reports)
    total_mutations = sum(r.mutations for r in reports)
    total_disagreements = sum(len(r.disagreements) for r in reports)
    failed = [r.name for r in reports if r.failure]
    summary = (f"{len(reports)} families, {total_frames} frames, {total_mutations} mutations, "
               f"{total_disagreements} disagreements" + (f", FAILED: {', '.join(failed)}" if failed else ""))
    if failed or total_disagreements:
        print(f"check-decoders: families FAIL ({summary})")
        return 1
    print(f"check-decoders: families PASS ({summary})")
    return 0


def print_report(r, max_listed=None):
    print(f"== family {r.name}: {r.frames} frames, {r.mutations} mutations, {r.agreements} agreements, "
          f"{len(r.disagreements)} disagreements")
    if r.failure:
        print(f"   FAILURE: {r.failure}")
        return
    print(f"   agreements include {r.refused} refused by both; {r.stricter} mutations only the reference decodes "
          f"(ours stricter); the reference raised on {r.reference_raised} mutations")
    if r.rounded:
        print("   frames where a value agreed only within the adapter's TOLERANCE (the reference rounds): "
              + ", ".join(f"{n} {c}" for n, c in sorted(r.rounded.items())))
    if r.we_refuse:
        print(f"   frames the reference decodes and the format refuses (the adapter's WE_REFUSE): {r.we_refuse}")
    if r.our_models:
        print("   models (ours, frames the reference decodes): " + ", ".join(f"{m} {n}" for m, n in sorted(r.our_models.items())))
    if r.theengs_off:
        print("   TheengsDecoder: not compared (the adapter's THEENGS = False, or not importable)")
    elif r.theengs_models or r.theengs_only:
        print(f"   TheengsDecoder recognised: " + (", ".join(f"{m} {n}" for m, n in sorted(r.theengs_models.items())) or "none")
              + f" ({r.theengs_compared} values compared; {len(r.theengs_only)} frames only it decodes)")
        if r.theengs_rounded:
            print("   TheengsDecoder values that agreed only within THEENGS_TOLERANCE: "
                  + ", ".join(f"{n} {c}" for n, c in sorted(r.theengs_rounded.items())))
        if r.theengs_excepted:
            print("   TheengsDecoder values not compared (THEENGS_EXCEPTIONS, where the format says it is wrong): "
                  + ", ".join(f"{label} {n}" for label, n in sorted(r.theengs_excepted.items())))
    else:
        print("   TheengsDecoder recognised none of its frames")
    for frame, model in r.theengs_only[:5]:
        print(f"   TheengsDecoder only ({model}; ours refuses, as the reference does): {frame_line(frame)}"
              + (f"  [{frame['source']}]" if frame.get("source") else ""))
    listed = r.disagreements if max_listed is None else r.disagreements[:max_listed]
    for what, frame, why, ours in listed:
        print(f"   DISAGREE ({what}): {why}")
        print(f"      frame: {frame_line(frame)}" + (f"  [{frame['source']}]" if frame.get("source") else ""))
        print(f"      ours:  {json.dumps(ours, ensure_ascii=False)}")
    if len(listed) < len(r.disagreements):
        print(f"   ... and {len(r.disagreements) - len(listed)} more disagreements (--max-listed)")


if __name__ == "__main__":
    sys.exit(main())
