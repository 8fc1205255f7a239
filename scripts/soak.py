#!/usr/bin/python3
# Debian's python3: it has the dbus module (python3-dbus), which the soak needs.
"""Soak test: the bridge against bluez-sim with 20 notifying peripherals and random faults from
issue 5's list, with the invariants checked continuously.

  scripts/soak.py [--minutes N | --seconds N] [--devices N] [--seed N] [--slack F]
               [--rss-growth-mib M] [--max-lost N] [--faults KIND,...] [--min-faults N]
               [--keep] [--debug]

  --minutes N / --seconds N   length of the run (default 2 minutes), start-up not included
  --devices N                 peripherals (default 20: half "known" at 4 Hz, half "found" by the
                              scan at 2 Hz + 1 Hz); scripts/sim/soak.yaml is the scenario
  --seed N                    random seed of the fault schedule (default: from the clock; printed)
  --slack F                   a device the bridge reports online must publish every notifying
                              characteristic within F x its period + 1 s (default 4)
  --rss-growth-mib M          after warm-up, the bridge's RSS may exceed the warm-up maximum by at
                              most M MiB (default 3)
  --max-lost N                values the simulator notified that never reached MQTT, outside the
                              broker outages, tolerated (default 0)
  --faults KIND,...           inject only these kinds (default: all, listed below)
  --min-faults N              every kind injected must be injected and recovered at least N
                              times (default 1): the fault phase goes on past its share of the
                              run until it is (at most as long again), and a kind that falls
                              short fails the run
  --keep                      keep the work directory (soak.log, bridge.log, bluez-sim.log,
                              notify.log, mqtt.log, rss.log, the config and the scenario)
  --debug                     use the debug build instead of release

What runs: a private dbus-daemon and bluez-sim (scripts/sim/start-sim, --notify-log), mosquitto on
a free loopback port, `ble-mqtt-bridge run` (release build; `swift build` first, so never a stale
binary) whose config
names every peripheral by address (so the scan runs only while one is missing), and a Python MQTT
subscriber (/usr/bin/python3: it has python3-dbus) that reconnects within 20 ms of a broker restart.

Faults, injected at random intervals (1-6 s apart) through the simulator's control interface
(scripts/sim/README.md), per device unless marked global (a global fault waits until every
earlier fault has recovered, and nothing starts during it). The kinds come in rounds, each kind
once per round in a random order, so that a short run still injects every kind:
  drop                       DropConnection (link loss)
  out_of_range               SetInRange false, 2-8 s, true
  abort_by_local             FailNextConnect Failed "le-connection-abort-by-local" x1-2, then a drop
  connect_in_progress        FailNextConnect InProgress, then a drop
  resolved_before_gatt       SetResolveBehaviour resolved-before-gatt:1s, a drop; normal 5 s later
  never_resolve              SetResolveBehaviour never-resolve, a drop; normal 2-6 s later (the
                             bridge's resolve timeout, 20 s, must disconnect and retry)
  remove_device_object       RemoveDeviceObject (InterfacesRemoved while known)
  start_discovery_in_progress FailNextStartDiscovery InProgress, then a drop
  stall_discovery            StallDiscovery, RemoveDeviceObject, SetInRange false; true 3-6 s later
                             (only the scan finds it again: the scan watchdog, 5 s, must restart it)
  bluetoothd_restart (global) scripts/sim/restart-sim --down 0-3 s (NameOwnerChanged)
  power_cycle (global)       SetPowered false, 1-4 s, true
  adapter_unplug (global)    RemoveAdapter, 1-4 s, AddAdapter
  broker_outage (global)     mosquitto stopped 2-8 s, restarted on the same port

Invariants (checked every 0.5 s; a broken one is reported at once and fails the run):
  - the bridge process is alive;
  - every device the bridge reports online publishes each notifying characteristic within
    slack x period + 1 s (not checked while the broker is away);
  - every fault recovers (affected devices offline, then online and publishing again; for the
    broker: values flowing again, no BLE link dropped) within 60 s of its end;
  - no duplicate subscriptions: at most one notify session per characteristic, and StartNotify
    calls per characteristic <= connections of the device (per simulator process);
  - no leaked connections: no device connected in the simulator for 45 s while the bridge reports
    it offline; at the end every device is connected once and online;
  - the bridge's RSS after warm-up stays within the bound;
  - every kind injected and recovered at least --min-faults times (a soak without faults proves
    nothing);
  - at the end: values were notified and received, no value published twice, no value lost
    outside broker outages (more than --max-lost fails the run; values the bridge replaced by
    newer ones while the broker was away are reported, not lost), and SIGTERM ends the bridge
    with status 0 within 5 s.
Prints a summary (RSS at start and end, faults injected by kind, recoveries, values expected vs
received) and exits 1 when an invariant broke.
"""
import argparse
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile


def _die(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def _free_port():
    for _ in range(200):
        port = 20000 + random.randrange(12768)
        s = socket.socket()
        try:
            s.bind(('127.0.0.1', port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    _die('soak: no free loopback port')


def _arguments():
    doc = __doc__.strip().split('\n')
    parser = argparse.ArgumentParser(
        prog='scripts/soak.py', description=doc[0], epilog='\n'.join(doc[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter, usage=argparse.SUPPRESS)
    length = parser.add_mutually_exclusive_group()
    length.add_argument('--minutes', type=int)
    length.add_argument('--seconds', type=int)
    parser.add_argument('--devices', type=int, default=20)
    parser.add_argument('--seed', type=int)
    parser.add_argument('--slack', type=float, default=4.0)
    parser.add_argument('--rss-growth-mib', type=float, default=3.0)
    parser.add_argument('--max-lost', type=int, default=0)
    parser.add_argument('--faults', default='')
    parser.add_argument('--min-faults', type=int, default=1)
    parser.add_argument('--keep', action='store_true')
    parser.add_argument('--debug', action='store_true')
    return parser.parse_args()


def _prepare(a):
    """Checks the arguments, builds what is missing, makes the work directory and the scenario;
    the soak below reads its settings from the SOAK_* environment variables set here."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if a.seconds is not None:
        seconds = a.seconds
    elif a.minutes is not None:
        seconds = a.minutes * 60
    else:
        seconds = int(os.environ.get('SOAK_SECONDS') or 120)
    if seconds < 30:
        _die('soak: the run must last at least 30 s')
    if a.min_faults < 0:
        _die('soak: --min-faults must be 0 or more')
    if not 2 <= a.devices <= 200:
        _die('soak: --devices must be 2..200')
    if shutil.which('swift') is None:
        _die('swift is not on PATH: install a Swift 6 toolchain (https://www.swift.org/install/linux/) '
             'and add its usr/bin to PATH')
    mosquitto = shutil.which('mosquitto') or ('/usr/sbin/mosquitto' if os.access('/usr/sbin/mosquitto', os.X_OK) else None)
    if mosquitto is None:
        _die('mosquitto is not installed')
    config = 'debug' if a.debug else 'release'
    flags = ['--scratch-path', os.environ['SWIFT_SCRATCH_PATH']] if os.environ.get('SWIFT_SCRATCH_PATH') else []
    bin_dir = subprocess.run(['swift', 'build', *flags, '-c', config, '--show-bin-path'], cwd=root,
                             check=True, capture_output=True, text=True).stdout.strip()
    # Always built (nothing to do when up to date): an existing binary may be older than the source.
    print('==> swift build -c %s (ble-mqtt-bridge, bluez-sim)' % config, flush=True)
    for product in ('ble-mqtt-bridge', 'bluez-sim'):
        subprocess.run(['swift', 'build', *flags, '-c', config, '--product', product], cwd=root, check=True)
    work = tempfile.mkdtemp(prefix='ble-mqtt-bridge-soak.', dir='/tmp')
    # The scenario with the requested number of devices (half known, half found).
    known = a.devices // 2
    found = a.devices - known
    with open(os.path.join(root, 'scripts/sim/soak.yaml')) as f:
        scenario = f.read()
    scenario = re.sub(r'count: [0-9]* *# soak:known', 'count: %d' % known, scenario)
    scenario = re.sub(r'count: [0-9]* *# soak:found', 'count: %d' % found, scenario)
    with open(os.path.join(work, 'soak.yaml'), 'w') as f:
        f.write(scenario)
    os.environ.update({
        'SOAK_ROOT': root, 'SOAK_BIN': bin_dir, 'SOAK_WORK': work, 'SOAK_PORT': str(_free_port()),
        'SOAK_SECONDS': str(seconds), 'SOAK_SEED': '' if a.seed is None else str(a.seed),
        'SOAK_SLACK': str(a.slack), 'SOAK_RSS_GROWTH': str(a.rss_growth_mib), 'SOAK_MAX_LOST': str(a.max_lost),
        'SOAK_MOSQUITTO': mosquitto, 'SOAK_KNOWN': str(known), 'SOAK_FOUND': str(found), 'SOAK_FAULTS': a.faults,
        'SOAK_MIN_FAULTS': str(a.min_faults),
    })
    return work


class _Tee:
    """Writes to the terminal and to the work directory's soak.log."""

    def __init__(self, stream, log):
        self.stream, self.log = stream, log

    def write(self, text):
        self.stream.write(text)
        self.stream.flush()
        self.log.write(text)
        return len(text)

    def flush(self):
        self.stream.flush()
        self.log.flush()


def _finish(code):
    """Keeps the work directory after a failure or with --keep; returns the exit status."""
    if _ARGS.keep or code != 0:
        print('==> work directory kept: %s' % _WORKDIR, flush=True)
    else:
        shutil.rmtree(_WORKDIR, ignore_errors=True)
    return code


_ARGS = _arguments()
_WORKDIR = _prepare(_ARGS)
_SOAK_LOG = open(os.path.join(_WORKDIR, 'soak.log'), 'a', buffering=1)
sys.stdout = _Tee(sys.__stdout__, _SOAK_LOG)
sys.stderr = _Tee(sys.__stderr__, _SOAK_LOG)

# ---------------------------------------------------------------- the soak

import json, os, random, signal, socket, struct, subprocess, sys, threading, time
import dbus

ROOT = os.environ['SOAK_ROOT']; BIN = os.environ['SOAK_BIN']; WORK = os.environ['SOAK_WORK']
PORT = int(os.environ['SOAK_PORT']); DURATION = int(os.environ['SOAK_SECONDS'])
SEED = int(os.environ['SOAK_SEED']) if os.environ.get('SOAK_SEED') else int(time.time()) % 100000
SLACK = float(os.environ['SOAK_SLACK']); RSS_GROWTH = float(os.environ['SOAK_RSS_GROWTH']) * 1024 * 1024
MAX_LOST = int(os.environ['SOAK_MAX_LOST']); MOSQUITTO = os.environ['SOAK_MOSQUITTO']
N_KNOWN = int(os.environ['SOAK_KNOWN']); N_FOUND = int(os.environ['SOAK_FOUND'])
MIN_FAULTS = int(os.environ['SOAK_MIN_FAULTS'])
# The fault phase goes on at most as long again as the run to reach MIN_FAULTS.
FAULT_OVERTIME = float(DURATION)
BASE = 'ble'
RECOVERY_TIMEOUT = 60.0
LEAK_TIMEOUT = 45.0
rng = random.Random(SEED)
T0 = time.time()


def log(msg):
    print('[%7.1fs] %s' % (time.time() - T0, msg), flush=True)


# ---------------------------------------------------------------- peripherals

class Device:
    def __init__(self, address, chars):
        self.address = address
        self.segment = address.replace(':', '').lower()
        self.chars = chars                      # uuid -> period (s)
        self.online = False
        self.online_since = 0.0
        self.offline_since = time.time()
        self.went_offline_at = 0.0              # last online -> offline transition
        self.last_value = {u: 0.0 for u in chars}
        self.recoveries = 0
        self.sim_connected_offline_since = None


def addresses(first, count):
    prefix, last = first.rsplit(':', 1)
    hi = int(first.replace(':', ''), 16)
    out = []
    for i in range(count):
        h = '%012X' % (hi + i)
        out.append(':'.join(h[j:j + 2] for j in range(0, 12, 2)))
    return out


devices = {}
for a in addresses('F0:50:AC:00:00:01', N_KNOWN):
    devices[a] = Device(a, {'ffe1': 0.25})
for a in addresses('5C:50:AC:00:01:01', N_FOUND):
    devices[a] = Device(a, {'ffe1': 0.5, 'ffe2': 1.0})
by_segment = {d.segment: d for d in devices.values()}
lock = threading.RLock()

# ---------------------------------------------------------------- processes

procs = {}


def start_sim():
    env = dict(os.environ, BLUEZ_SIM=BIN + '/bluez-sim')
    out = subprocess.run([ROOT + '/scripts/sim/start-sim', WORK, WORK + '/soak.yaml'], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit('soak: bluez-sim did not start: ' + out.stderr)
    return out.stdout.strip()


def start_broker():
    conf = WORK + '/mosquitto.conf'
    with open(conf, 'w') as f:
        f.write('listener %d 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n'
                'log_timestamp true\nlog_type error\nlog_type warning\nlog_type notice\n'
                'log_type information\nconnection_messages true\n' % PORT)
    errf = open(WORK + '/mosquitto.log', 'a')
    p = subprocess.Popen([MOSQUITTO, '-c', conf], stdin=subprocess.DEVNULL, stdout=errf, stderr=errf)
    for _ in range(400):
        try:
            socket.create_connection(('127.0.0.1', PORT), timeout=0.2).close()
            procs['broker'] = p
            return p
        except OSError:
            if p.poll() is not None:
                raise SystemExit('soak: mosquitto exited: ' + open(WORK + '/mosquitto.log').read()[-2000:])
            time.sleep(0.02)
    raise SystemExit('soak: mosquitto does not listen on %d' % PORT)


def stop_process(p, grace=5.0):
    if p is None or p.poll() is not None:
        return p.returncode if p else None
    p.send_signal(signal.SIGTERM)
    try:
        return p.wait(grace)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait(5)


# ---------------------------------------------------------------- MQTT subscriber (MQTT 3.1.1)

class Subscriber(threading.Thread):
    """Subscribes to ble/# and reconnects every 20 ms while the broker is away."""

    def __init__(self, on_message):
        super().__init__(daemon=True)
        self.on_message = on_message
        self.connected = threading.Event()
        self.connected_at = 0.0
        self.stopping = False
        self.sock = None
        self.out = open(WORK + '/mqtt.log', 'w')

    @staticmethod
    def _string(s):
        b = s.encode()
        return struct.pack('!H', len(b)) + b

    @staticmethod
    def _packet(kind, body):
        n = len(body)
        length = b''
        while True:
            byte = n % 128
            n //= 128
            length += bytes([byte | (0x80 if n else 0)])
            if not n:
                break
        return bytes([kind]) + length + body

    def _recv(self, n):
        buf = b''
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError('closed')
            buf += chunk
        return buf

    def _read_packet(self):
        header = self._recv(1)[0]
        mult, length = 1, 0
        while True:
            b = self._recv(1)[0]
            length += (b & 127) * mult
            mult *= 128
            if not b & 128:
                break
        return header, self._recv(length) if length else b''

    def _session(self):
        self.sock = socket.create_connection(('127.0.0.1', PORT), timeout=1)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        body = self._string('MQTT') + bytes([4, 0x02]) + struct.pack('!H', 30) + self._string('soak-observer')
        self.sock.sendall(self._packet(0x10, body))
        header, body = self._read_packet()
        if header >> 4 != 2 or body[1] != 0:
            raise ConnectionError('CONNACK %r' % body)
        self.sock.sendall(self._packet(0x82, struct.pack('!H', 1) + self._string(BASE + '/#') + bytes([1])))
        self.sock.settimeout(10)
        last_ping = time.time()
        subscribed = False
        while not self.stopping:
            if time.time() - last_ping > 10:
                self.sock.sendall(bytes([0xC0, 0]))
                last_ping = time.time()
            try:
                header, body = self._read_packet()
            except socket.timeout:
                continue
            kind = header >> 4
            if kind == 9 and not subscribed:
                subscribed = True
                self.connected_at = time.time()
                self.connected.set()
            elif kind == 3:
                qos = (header >> 1) & 3
                tlen = struct.unpack('!H', body[:2])[0]
                topic = body[2:2 + tlen].decode(errors='replace')
                pos = 2 + tlen
                if qos:
                    pid = body[pos:pos + 2]
                    pos += 2
                    self.sock.sendall(bytes([0x40, 2]) + pid)
                payload = body[pos:].decode(errors='replace')
                now = time.time()
                self.out.write('%.6f %d %s %s\n' % (now, header & 1, topic, payload))
                self.on_message(now, topic, payload, bool(header & 1))

    def run(self):
        while not self.stopping:
            try:
                self._session()
            except (OSError, ConnectionError, IndexError):
                pass
            self.connected.clear()
            try:
                if self.sock:
                    self.sock.close()
            except OSError:
                pass
            if not self.stopping:
                time.sleep(0.02)


received = {}            # (address, uuid, raw) -> [receipt times]
received_total = 0
bridge_state = {'value': None}
bridge_online_times = []   # every `bridge/state online` (the bridge publishes it on each broker connection)


def on_message(now, topic, payload, retained):
    global received_total
    parts = topic.split('/')
    with lock:
        if len(parts) == 3 and parts[1] == 'bridge' and parts[2] == 'state':
            bridge_state['value'] = payload
            if payload == 'online':
                bridge_online_times.append(now)
            return
        if len(parts) < 3:
            return
        d = by_segment.get(parts[1])
        if d is None:
            return
        if len(parts) == 3 and parts[2] == 'availability':
            online = payload == 'online'
            if online and not d.online:
                d.online_since = now
                if d.went_offline_at:
                    d.recoveries += 1
            if not online and d.online:
                d.went_offline_at = now
                d.offline_since = now
            d.online = online
            return
        if len(parts) == 4 and parts[2] == 'ffe0' and parts[3] in d.chars:
            try:
                raw = json.loads(payload)['raw']
            except (ValueError, KeyError, TypeError):
                violation('malformed value payload on %s: %r' % (topic, payload))
                return
            d.last_value[parts[3]] = now
            key = (d.address, parts[3], raw)
            received.setdefault(key, []).append(now)
            received_total += 1


# ---------------------------------------------------------------- simulator control

bus_address = None
bus = None


def ctl(method, *args):
    global bus
    if bus is None:
        bus = dbus.bus.BusConnection(bus_address)
    obj = bus.get_object('org.bluezsim', '/org/bluezsim', introspect=False)
    return getattr(dbus.Interface(obj, 'org.bluezsim.Control1'), method)(*args, timeout=30)


def plain(v):
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.Dictionary, dict)):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (dbus.Array, list, tuple, dbus.Struct)):
        return [plain(x) for x in v]
    if isinstance(v, (dbus.String, dbus.ObjectPath, str)):
        return str(v)
    if isinstance(v, (dbus.Double, float)):
        return float(v)
    return int(v)


def stats():
    try:
        return plain(ctl('GetStats'))
    except dbus.exceptions.DBusException:
        return None       # restarting


# ---------------------------------------------------------------- invariants

violations = []
violation_keys = set()


def violation(text, key=None):
    """Records a broken invariant once per key (default: the text)."""
    key = key or text
    if key not in violation_keys:
        violation_keys.add(key)
        violations.append(text)
        log('INVARIANT BROKEN: ' + text)


def rss_of(pid):
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


# ---------------------------------------------------------------- faults

SIM_DIR = WORK


class Fault:
    def __init__(self, kind, device, glob):
        self.kind = kind
        self.device = device
        self.glob = glob
        self.start = time.time()
        self.end_at = self.start          # when the end action is due
        self.ended = False
        self.end_action = None
        self.ended_time = None
        self.expect_offline = True
        self.recovered_at = None
        self.affected = list(devices.values()) if glob else [device]
        self.proc = None                  # restart-sim
        self.disconnects_before = None

    def __repr__(self):
        return self.kind + ('' if self.glob else ' ' + self.device.address)


broker_away = {'since': None, 'back': 0.0, 'outages': []}


def inject(kind, d):
    """Starts fault `kind` on device d (None for a global fault); returns the Fault."""
    glob = d is None
    f = Fault(kind, d, glob)
    a = d.address if d else None
    if kind == 'drop':
        ctl('DropConnection', a)
    elif kind == 'out_of_range':
        ctl('SetInRange', a, False)
        f.end_at += rng.uniform(2, 8)
        f.end_action = lambda: ctl('SetInRange', a, True)
    elif kind == 'abort_by_local':
        ctl('FailNextConnect', a, 'org.bluez.Error.Failed', 'le-connection-abort-by-local', dbus.UInt32(rng.randint(1, 2)))
        ctl('DropConnection', a)
    elif kind == 'connect_in_progress':
        ctl('FailNextConnect', a, 'org.bluez.Error.InProgress', '', dbus.UInt32(1))
        ctl('DropConnection', a)
    elif kind == 'resolved_before_gatt':
        ctl('SetResolveBehaviour', a, 'resolved-before-gatt:1s')
        ctl('DropConnection', a)
        f.end_at += 5
        f.end_action = lambda: ctl('SetResolveBehaviour', a, 'normal')
    elif kind == 'never_resolve':
        ctl('SetResolveBehaviour', a, 'never-resolve')
        ctl('DropConnection', a)
        f.end_at += rng.uniform(2, 6)
        f.end_action = lambda: ctl('SetResolveBehaviour', a, 'normal')
    elif kind == 'remove_device_object':
        ctl('RemoveDeviceObject', a)
    elif kind == 'start_discovery_in_progress':
        ctl('FailNextStartDiscovery', 'org.bluez.Error.InProgress', 'Operation already in progress')
        ctl('DropConnection', a)
    elif kind == 'stall_discovery':
        ctl('StallDiscovery')
        ctl('SetInRange', a, False)
        ctl('RemoveDeviceObject', a)
        f.end_at += rng.uniform(3, 6)
        f.end_action = lambda: ctl('SetInRange', a, True)
    elif kind == 'bluetoothd_restart':
        env = dict(os.environ, BLUEZ_SIM=BIN + '/bluez-sim')
        f.proc = subprocess.Popen([ROOT + '/scripts/sim/restart-sim', SIM_DIR, '--down', '%.1f' % rng.uniform(0, 3)],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        f.end_at += 3600          # ends when restart-sim returns
    elif kind == 'power_cycle':
        ctl('SetPowered', False)
        f.end_at += rng.uniform(1, 4)
        f.end_action = lambda: ctl('SetPowered', True)
    elif kind == 'adapter_unplug':
        ctl('RemoveAdapter')
        f.end_at += rng.uniform(1, 4)
        f.end_action = lambda: ctl('AddAdapter')
    elif kind == 'broker_outage':
        f.expect_offline = False
        s = stats()
        f.disconnects_before = s['disconnects'] if s else None
        stop_process(procs['broker'])
        broker_away['since'] = time.time()
        f.end_at += rng.uniform(2, 8)

        def back():
            start_broker()
            broker_away['outages'].append((broker_away['since'], time.time()))
            broker_away['since'] = None
            broker_away['back'] = time.time()
        f.end_action = back
    else:
        raise ValueError(kind)
    return f


DEVICE_FAULTS = ['drop', 'out_of_range', 'abort_by_local', 'connect_in_progress', 'resolved_before_gatt',
                 'never_resolve', 'remove_device_object', 'start_discovery_in_progress', 'stall_discovery']
GLOBAL_FAULTS = ['bluetoothd_restart', 'power_cycle', 'adapter_unplug', 'broker_outage']
SCAN_FAULTS = {'start_discovery_in_progress', 'stall_discovery'}
if os.environ.get('SOAK_FAULTS'):
    chosen = os.environ['SOAK_FAULTS'].split(',')
    unknown = [k for k in chosen if k not in DEVICE_FAULTS + GLOBAL_FAULTS]
    if unknown:
        raise SystemExit('soak: unknown fault kinds %s (known: %s)' % (unknown, ' '.join(DEVICE_FAULTS + GLOBAL_FAULTS)))
    DEVICE_FAULTS = [k for k in DEVICE_FAULTS if k in chosen]
    GLOBAL_FAULTS = [k for k in GLOBAL_FAULTS if k in chosen]


def step_fault(f, now):
    """Performs a due end action and checks recovery; returns True once the fault is over."""
    if not f.ended:
        if f.proc is not None:
            if f.proc.poll() is None:
                return False
            if f.proc.returncode != 0:
                violation('restart-sim failed: ' + f.proc.stderr.read())
            f.ended = True
            f.ended_time = now
        elif now >= f.end_at:
            if f.end_action:
                f.end_action()
            f.ended = True
            f.ended_time = now
        else:
            return False
    with lock:
        ok = True
        for d in f.affected:
            if not d.online:
                ok = False
                break
            if f.expect_offline and d.went_offline_at < f.start:
                ok = False
                break
            since = max(d.online_since, f.ended_time) if f.expect_offline else f.ended_time
            if any(t <= since for t in d.last_value.values()):
                ok = False
                break
    if ok:
        f.recovered_at = now
        if f.kind == 'broker_outage' and f.disconnects_before is not None:
            s = stats()
            if s and s['disconnects'] != f.disconnects_before:
                violation('BLE links dropped during a broker outage (%d disconnects)'
                          % (s['disconnects'] - f.disconnects_before))
        return True
    if now - f.ended_time > RECOVERY_TIMEOUT:
        with lock:
            missing = ['%s(online=%s)' % (d.address, d.online) for d in f.affected
                       if not d.online or any(t <= max(d.online_since, f.ended_time) for t in d.last_value.values())]
        violation('%r did not recover within %.0f s of its end: %s' % (f, RECOVERY_TIMEOUT, ', '.join(missing[:6])))
        f.recovered_at = None
        return True
    return False


# ---------------------------------------------------------------- run

def bridge_config():
    lines = ['mqtt:', '  url: mqtt://127.0.0.1:%d' % PORT, '  client_id: soak-bridge',
             # Every device at once (the default of 7 links is a real controller's limit).
             'bluetooth:', '  adapter: hci0', '  scan_watchdog: 5s', '  max_connections: %d' % max(7, len(devices)),
             'state_file: %s/peripherals.json' % WORK,
             'reconnect:', '  initial_delay: 500ms', '  max_delay: 5s', 'devices:']
    for d in devices.values():
        lines.append('  - match: { address: "%s" }' % d.address)
    with open(WORK + '/bridge.yaml', 'w') as f:
        f.write('\n'.join(lines) + '\n')


def main():
    global bus_address
    log('soak: %d s, %d devices (%d known at 4 Hz, %d found at 2 + 1 Hz), seed %d, work %s'
        % (DURATION, len(devices), N_KNOWN, N_FOUND, SEED, WORK))
    bus_address = start_sim()
    start_broker()
    sub = Subscriber(on_message)
    sub.start()
    if not sub.connected.wait(10):
        raise SystemExit('soak: the subscriber did not connect')
    bridge_config()
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus_address)
    bridge_log = open(WORK + '/bridge.log', 'w')
    bridge = subprocess.Popen([BIN + '/ble-mqtt-bridge', 'run', '--config', WORK + '/bridge.yaml', '--log-level', 'info'],
                              env=env, stdin=subprocess.DEVNULL, stdout=bridge_log, stderr=subprocess.STDOUT)
    procs['bridge'] = bridge

    # Start-up: every device online and publishing.
    deadline = time.time() + 90
    while True:
        with lock:
            ready = all(d.online and all(t > d.online_since for t in d.last_value.values()) for d in devices.values())
        if ready:
            break
        if bridge.poll() is not None or time.time() > deadline:
            with lock:
                missing = [d.address for d in devices.values() if not d.online]
            log('start-up failed (bridge %s); offline: %s' % (
                'exited %s' % bridge.returncode if bridge.poll() is not None else 'running', missing))
            print(open(WORK + '/bridge.log').read()[-4000:])
            return 1
        time.sleep(0.1)
    startup = time.time() - T0
    rss_start = rss_of(bridge.pid)
    log('all %d devices online and publishing after %.1f s; bridge RSS %.2f MiB'
        % (len(devices), startup, rss_start / 1048576))

    t_start = time.time()
    quiet = min(60.0, max(15.0, DURATION * 0.15))
    t_faults_end = t_start + DURATION - quiet
    t_end = t_start + DURATION
    warmup_end = t_start + max(30.0, DURATION * 0.2)
    rss_samples = []              # (t, rss)
    rss_log = open(WORK + '/rss.log', 'w', buffering=1)   # seconds since start, VmRSS bytes
    rss_baseline = None
    injected = {}
    recovery_times = {}
    active = []
    next_fault = t_start + rng.uniform(1, 4)
    pending_global = None
    kinds = DEVICE_FAULTS + GLOBAL_FAULTS
    bag = []                      # the rest of this round of kinds (popped from the end)

    t_faults_cap = t_faults_end + FAULT_OVERTIME
    extended = False

    def short_injected():
        return [k for k in kinds if injected.get(k, 0) < MIN_FAULTS]

    last_stats = 0.0
    last_rss = 0.0
    last_report = t_start
    sim_disconnects = 0
    checks = 0

    while True:
        now = time.time()
        if bridge.poll() is not None:
            violation('the bridge exited with status %s' % bridge.returncode)
            break
        # Faults: end, recover, start.
        for f in list(active):
            try:
                done = step_fault(f, now)
            except dbus.exceptions.DBusException as e:
                log('%r: %s (retrying)' % (f, e.get_dbus_message()))
                done = False
            if done:
                active.remove(f)
                if f.recovered_at:
                    recovery_times.setdefault(f.kind, []).append(f.recovered_at - f.ended_time)
        if t_faults_end <= now < t_faults_cap and short_injected():
            # Past the fault phase's share with a kind injected fewer than MIN_FAULTS times: it goes
            # on, and the quiet phase and the end move with it.
            if not extended:
                log('fault phase extended: injected fewer than %d times: %s' % (MIN_FAULTS, ', '.join(short_injected())))
                extended = True
            t_end += now + 1.0 - t_faults_end
            t_faults_end = now + 1.0
        if now >= next_fault and now < t_faults_end:
            glob_active = any(f.glob for f in active)
            if not glob_active:
                # A global fault, once drawn, waits until every earlier fault has recovered.
                if pending_global:
                    kind = pending_global
                else:
                    if not bag:
                        bag = list(kinds)
                        rng.shuffle(bag)
                    kind = bag.pop()
                pending_global = kind if kind in GLOBAL_FAULTS and active else None
                busy = {f.device.address for f in active if f.device}
                scan_busy = any(f.kind in SCAN_FAULTS for f in active)
                target = None
                ok = True
                if kind in GLOBAL_FAULTS:
                    ok = not active
                else:
                    free = [d for d in devices.values() if d.address not in busy and d.online]
                    if kind in SCAN_FAULTS and scan_busy:
                        ok = False
                    elif not free:
                        ok = False
                    else:
                        target = rng.choice(free)
                if ok:
                    try:
                        f = inject(kind, target)
                        active.append(f)
                        injected[kind] = injected.get(kind, 0) + 1
                        log('fault %r' % f)
                    except dbus.exceptions.DBusException as e:
                        log('fault %s not injected: %s' % (kind, e.get_dbus_message()))
                        bag.insert(0, kind)
                    next_fault = now + rng.uniform(1, 6)
                else:
                    if kind not in GLOBAL_FAULTS:
                        bag.insert(0, kind)     # later in this round (a global one waits as pending_global)
                    next_fault = now + 0.5
        if now >= t_faults_end and not active:
            # Quiet phase: no new faults; the run ends at t_end once every fault is over.
            if now >= t_end:
                break
        if now >= t_end + RECOVERY_TIMEOUT:
            violation('faults still active at the end: %r' % active)
            break

        # Values flow for every device the bridge reports online.
        # The broker counts as away until the bridge is connected again (its `bridge/state online`).
        with lock:
            bridge_back = bridge_online_times[-1] if bridge_online_times else 0.0
        if bridge_back < broker_away['back']:
            bridge_back = None
        outage = broker_away['since'] is not None or bridge_back is None or not sub.connected.is_set() \
            or now - sub.connected_at < 3
        if not outage:
            checks += 1
            with lock:
                for d in devices.values():
                    if not d.online:
                        continue
                    for u, period in d.chars.items():
                        limit = period * SLACK + 1.0
                        since = max(d.last_value[u], d.online_since, bridge_back + 1, sub.connected_at + 3)
                        if now - since > limit:
                            violation('%s is online but %s published nothing for %.1f s (limit %.1f s)'
                                      % (d.address, u, now - since, limit), key=('silent', d.address, u, d.online_since))
        # Simulator counters: sessions, StartNotify calls, leaked connections.
        if now - last_stats >= 2:
            last_stats = now
            s = stats()
            if s:
                with lock:
                    for a, ds in s['devices'].items():
                        d = devices.get(a)
                        if d is None:
                            if ds['connected']:
                                violation('a device the bridge does not want is connected: %s' % a)
                            continue
                        for u, n in ds['notify_sessions_by_uuid'].items():
                            if n > 1:
                                violation('%s: %d notify sessions on %s' % (a, n, u), key=('sessions', a, u))
                        if len(ds['notify_clients']) > 1:
                            violation('%s: several notify clients %s' % (a, ds['notify_clients']), key=('clients', a))
                        for u, n in ds['start_notify_calls_by_uuid'].items():
                            if n > ds['connects']:
                                violation('%s: %d StartNotify calls on %s for %d connections (duplicate subscriptions)'
                                          % (a, n, u, ds['connects']), key=('startnotify', a, u))
                        if ds['connected'] and not d.online and broker_away['since'] is None \
                                and now - broker_away['back'] > 5:
                            if d.sim_connected_offline_since is None:
                                d.sim_connected_offline_since = now
                            elif now - d.sim_connected_offline_since > LEAK_TIMEOUT:
                                violation('%s connected in the simulator but offline at the bridge for %.0f s (leaked connection?)'
                                          % (a, now - d.sim_connected_offline_since), key=('leak', a, d.sim_connected_offline_since))
                        else:
                            d.sim_connected_offline_since = None
        # RSS.
        if now - last_rss >= 1:
            last_rss = now
            r = rss_of(bridge.pid)
            if r:
                rss_samples.append((now, r))
                rss_log.write('%.1f %d\n' % (now - t_start, r))
                if now >= warmup_end:
                    if rss_baseline is None:
                        rss_baseline = max(x for t, x in rss_samples)
                        log('warm-up over: RSS baseline (warm-up maximum) %.2f MiB' % (rss_baseline / 1048576))
                    elif r > rss_baseline + RSS_GROWTH:
                        violation('bridge RSS %.2f MiB exceeds the warm-up maximum %.2f MiB by more than %.1f MiB'
                                  % (r / 1048576, rss_baseline / 1048576, RSS_GROWTH / 1048576), key='rss')
        if now - last_report >= 60:
            last_report = now
            with lock:
                on = sum(d.online for d in devices.values())
            log('%d faults so far, %d/%d online, %d values received, RSS %.2f MiB'
                % (sum(injected.values()), on, len(devices), received_total, (rss_samples[-1][1] if rss_samples else 0) / 1048576))
        time.sleep(0.05)

    # ------------------------------------------------------------ the end
    end_state_ok = False
    if bridge.poll() is None:
        # Every device online and connected once, one session per notifying characteristic.
        deadline = time.time() + 30
        while time.time() < deadline:
            s = stats()
            with lock:
                all_online = all(d.online for d in devices.values())
            if s and all_online and s['connected_devices'] == len(devices) and all(
                    # `notifying`: StartNotify sessions and AcquireNotify sockets alike.
                    s['devices'][d.address]['notifying'] >= len(d.chars) for d in devices.values()):
                end_state_ok = True
                break
            time.sleep(0.2)
        if not end_state_ok:
            with lock:
                off = [d.address for d in devices.values() if not d.online]
            violation('at the end: devices offline %s, simulator connected %s' % (off, s and s['connected_devices']))
        time.sleep(1.0)
    rss_end = rss_of(bridge.pid) if bridge.poll() is None else None
    cut = time.time() - 1.0

    exit_time = None
    if bridge.poll() is None:
        t = time.time()
        bridge.send_signal(signal.SIGTERM)
        try:
            code = bridge.wait(5)
            exit_time = time.time() - t
            if code != 0:
                violation('SIGTERM: the bridge exited with status %d' % code)
        except subprocess.TimeoutExpired:
            violation('SIGTERM: the bridge did not exit within 5 s')
            bridge.kill()
            bridge.wait()
    time.sleep(0.3)
    sub.stopping = True
    stop_process(procs.get('broker'))
    subprocess.run([ROOT + '/scripts/sim/stop', WORK])
    sub.out.flush()

    # Values: what the simulator notified before the cut vs what reached MQTT.
    emitted = {}              # before the cut: expected at MQTT
    emitted_all = {}          # whole run: to tell duplicates from values of a restarted simulator
    emitted_total = 0
    # A broker outage lasts, for the values, from the broker's stop until the bridge is connected
    # again (its `bridge/state online`), which its reconnect backoff makes later than the restart.
    outage_windows = []
    for a, b in broker_away['outages']:
        back = min([t for t in bridge_online_times if t >= b] or [b + 60])
        outage_windows.append((a - 0.5, back + 0.5))
    emitted_at = {}
    with open(WORK + '/notify.log') as f:
        for line in f:
            p = line.split()
            if len(p) != 4:
                continue
            ts = int(p[0]) / 1e9
            key = (p[1].upper(), p[2][4:8] if len(p[2]) == 36 else p[2].lower(), p[3].lower())
            emitted_all[key] = emitted_all.get(key, 0) + 1
            emitted_at.setdefault(key, []).append(ts)
            if ts >= cut:
                continue
            emitted[key] = emitted.get(key, 0) + 1
            emitted_total += 1
    # Each MQTT value is matched to the latest unmatched notification of the same device,
    # characteristic and bytes before it (counters start over when the simulator restarts, and a
    # held value is published seconds after its notification).
    lost_outage = lost_other = 0
    lost_examples = []
    duplicated = 0
    received_matched = 0
    for key in set(emitted_all) | set(received):
        times = sorted(emitted_at.get(key, []))
        matched = [False] * len(times)
        for r in sorted(received.get(key, [])):
            best = None
            for i, ts in enumerate(times):
                if ts <= r + 0.1 and not matched[i]:
                    best = i
            if best is None:
                duplicated += 1
            else:
                matched[best] = True
                if times[best] < cut:
                    received_matched += 1
        for i, ts in enumerate(times):
            if matched[i] or ts >= cut:
                continue
            if any(a <= ts <= b for a, b in outage_windows):
                lost_outage += 1
            else:
                lost_other += 1
                if len(lost_examples) < 8:
                    lost_examples.append('%s %s %s at %.1fs' % (key[0], key[1], key[2], ts - T0))
    replaced = 0
    held_sent = 0
    import re
    blog = open(WORK + '/bridge.log', errors='replace').read()
    for m in re.finditer(r'published (\d+) values held while it was away; (\d+) older values were replaced', blog):
        held_sent += int(m.group(1))
        replaced += int(m.group(2))
    # Every kind of fault injected and recovered (a soak that injected nothing checked nothing).
    for k in DEVICE_FAULTS + GLOBAL_FAULTS:
        n, r = injected.get(k, 0), len(recovery_times.get(k, []))
        if n < MIN_FAULTS or r < MIN_FAULTS:
            violation('fault %s injected %d times, recovered %d times: at least %d of each wanted'
                      % (k, n, r, MIN_FAULTS))
    if emitted_total == 0 or received_matched == 0:
        violation('no values to compare: %d notified by the simulator (notify.log), %d of them received'
                  % (emitted_total, received_matched))
    if lost_other > MAX_LOST:
        violation('%d values lost outside broker outages (e.g. %s)' % (lost_other, '; '.join(lost_examples)))
    if duplicated:
        violation('%d values published more than once' % duplicated)
    unexplained_outage = max(0, lost_outage - replaced)

    # ------------------------------------------------------------ summary
    def mib(x):
        return '%.2f MiB' % (x / 1048576) if x else 'n/a'
    post = [r for t, r in rss_samples if t >= warmup_end]
    slope = 0.0
    pts = [(t, r) for t, r in rss_samples if t >= warmup_end]
    if len(pts) > 10:
        mt = sum(t for t, _ in pts) / len(pts)
        mr = sum(r for _, r in pts) / len(pts)
        den = sum((t - mt) ** 2 for t, _ in pts)
        slope = sum((t - mt) * (r - mr) for t, r in pts) / den * 60 / 1024 if den else 0.0
    with lock:
        recoveries = sum(d.recoveries for d in devices.values())
    print()
    print('==== soak summary ====')
    print('machine:      %s, %d CPUs, %s' % (os.uname().machine, os.cpu_count(), os.uname().release))
    print('run:          %d s of faults + quiet, %d devices, seed %d, slack %.1f, start-up to all online %.1f s'
          % (DURATION, len(devices), SEED, SLACK, startup))
    print('bridge RSS:   start %s (all online), warm-up max %s, after warm-up max %s, end %s, trend %+.1f KiB/min'
          % (mib(rss_start), mib(rss_baseline), mib(max(post) if post else 0), mib(rss_end), slope))
    print('faults:       %d injected: %s' % (sum(injected.values()),
                                            ', '.join('%s %d' % (k, injected[k]) for k in sorted(injected))))
    print('recoveries:   %d device offline->online transitions; faults recovered: %d' % (
        recoveries, sum(len(v) for v in recovery_times.values())))
    for k in sorted(recovery_times):
        v = sorted(recovery_times[k])
        print('              %-28s n=%-3d median %5.1f s  max %5.1f s (from the fault\'s end)'
              % (k, len(v), v[len(v) // 2], v[-1]))
    print('values:       %d notified by the simulator before the end, %d of them received; %d MQTT values in all, '
          '%d duplicates; %d missing: %d during broker outages (bridge reported %d replaced by newer values, '
          '%d held values sent), %d elsewhere' % (emitted_total, received_matched, received_total, duplicated,
                                                  lost_outage + lost_other, lost_outage, replaced, held_sent, lost_other))
    if unexplained_outage:
        print('              %d values missing around broker outages beyond the reported replacements '
              '(sent at QoS 0 as the broker went away)' % unexplained_outage)
    if outage_windows:
        print('broker:       %d outages, broker away %.1f s at most, bridge reconnected %.1f s after the broker at most'
              % (len(outage_windows), max(b - a for a, b in broker_away['outages']),
                 max(w[1] - 0.5 - o[1] for w, o in zip(outage_windows, broker_away['outages']))))
    print('shutdown:     %s' % ('SIGTERM -> exit 0 in %.2f s' % exit_time if exit_time is not None and not any(
        'SIGTERM' in v for v in violations) else 'see violations'))
    print('invariant checks: %d value-flow rounds' % checks)
    if violations:
        print('RESULT: FAILED, %d invariant(s) broken:' % len(violations))
        for v in violations:
            print('  - ' + v)
        print('bridge log tail:')
        print('\n'.join(blog.splitlines()[-30:]))
        return 1
    print('RESULT: OK, every invariant held')
    return 0


try:
    code = main()
except SystemExit:
    raise
except BaseException as e:
    import traceback
    traceback.print_exc()
    code = 2
finally:
    for name in ('bridge', 'broker'):
        p = procs.get(name)
        if p is not None and p.poll() is None:
            stop_process(p)
    subprocess.run([ROOT + '/scripts/sim/stop', WORK])
sys.exit(_finish(code))
