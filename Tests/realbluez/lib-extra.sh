# shellcheck shell=bash
# Helpers of checks/40-commands.sh, 50-recovery.sh and 70-advertisements.sh (sourced by them, after
# lib.sh). Everything here is prefixed rx_ / RX_ so it cannot clash with lib.sh.
#
#   rx_now                                   unix time, microsecond resolution ("1795325471.123456")
#   rx_diff A B                              A - B in seconds, 3 decimals
#   rx_command TOPIC PAYLOAD [TX_JSON] [S]   publish a command, print its result (the first message on
#                                            TOPIC's /result after publishing whose "transaction" is TX_JSON,
#                                            or any without TX_JSON), from the recorder's mqtt.log
#   rx_wait_after TOPIC T0 N S [PAYLOAD]     N messages on TOPIC (with that payload) recorded after T0
#   rx_time_of TOPIC T0 PAYLOAD S            print the recorder time of the first such message after T0
#   rx_file_size FILE                        bytes in FILE now (an offset for rx_gatt_log)
#   rx_gatt_log OFFSET REGEX S [HEX]         a line of gatt-server.log after OFFSET matching REGEX (and whose
#                                            dbus.Byte(...) list is HEX) within S seconds; --absent: none
#   rx_att HEX [S]                           the ATT write PDUs carrying exactly HEX in btmon.snoop
#   rx_flags PATH                            a characteristic's BlueZ Flags, e.g. read,write
#   rx_char_path UUID                        the BlueZ object of the peripheral's characteristic UUID
#   rx_start_bridge CONFIG                   start the bridge again (log appended to bridge.log), wait for a
#                                            bridge/state online published after the start
#   rx_wait_online SECONDS                   the peripheral's availability is (or becomes) online
#   rx_bluetoothctl SECONDS CMD...           bluetoothctl fed on stdin: select the central, then CMDs
#   rx_pids_of SCRIPT                        pids of the processes started as `python3 -u SCRIPT`
#
# The Python helper below ("$PY" -c "$RX_PY" SUBCOMMAND ...) reads the recorder log
# (`<unix time> <mosquitto_sub %j JSON>` per line), gatt-server.log, btmon.snoop and
# dbus-monitor.txt; like rbtool.py its last output line is the summary or the reason.

RX_GATT_LOG=$RB_OUT/logs/gatt-server.log
RX_SNOOP=$RB_OUT/logs/btmon.snoop
RX_TEST_SVC=12345678-1234-5678-1234-56789abcdef0
RX_TEST_CHR=12345678-1234-5678-1234-56789abcdef1

rx_now() { echo "$EPOCHREALTIME"; }
# rx_diff A B: A - B (unix times) in seconds, 3 decimals
rx_diff() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }

read -r -d '' RX_PY <<'PYEOF'
import json, re, struct, sys, time

def die(msg):
    print(' '.join(str(msg).split())); sys.exit(1)

def ok(msg):
    print(msg); sys.exit(0)

def topic_matches(pattern, topic):
    p, t = pattern.split('/'), topic.split('/')
    for i, seg in enumerate(p):
        if seg == '#':
            return True
        if i >= len(t) or (seg != '+' and seg != t[i]):
            return False
    return len(p) == len(t)

def messages(log, topic, t0):
    out = []
    try:
        with open(log, encoding='utf-8', errors='replace') as f:
            for line in f:
                ts, _, rest = line.partition(' ')
                try:
                    m, t = json.loads(rest), float(ts)
                except ValueError:
                    continue
                if t >= t0 and topic_matches(topic, m.get('topic', '')):
                    p = m.get('payload')
                    if not isinstance(p, str):
                        p = json.dumps(p, separators=(',', ':'))
                    out.append((t, m['topic'], p))
    except FileNotFoundError:
        pass
    return out

def poll(fn, timeout, step=0.1):
    end = time.time() + timeout
    while True:
        r = fn()
        if r or time.time() >= end:
            return r
        time.sleep(step)

def cmd_result(log, topic, t0, timeout, tx=None):
    t0, want = float(t0), (json.loads(tx) if tx else None)
    def find():
        for t, _, p in messages(log, topic, t0):
            try:
                v = json.loads(p)
            except ValueError:
                v = None
            if want is None or (isinstance(v, dict) and v.get('transaction') == want):
                return (t, p)
    r = poll(find, float(timeout))
    if not r:
        die('no result on %s within %ss%s' % (topic, timeout, ' with "transaction": %s' % tx if tx else ''))
    print(r[1])
    print('# %.3fs after the command' % (r[0] - t0), file=sys.stderr)

def cmd_wait_after(log, topic, t0, n, timeout, payload=None):
    t0, n = float(t0), int(n)
    sel = lambda: [m for m in messages(log, topic, t0) if payload is None or m[2] == payload]
    msgs = poll(lambda: (lambda x: x if len(x) >= n else None)(sel()), float(timeout)) or sel()
    for t, tp, p in msgs:
        print('+%.3fs %s %s' % (t - t0, tp, p[:200]))
    what = '%s%s' % (topic, " '%s'" % payload if payload is not None else '')
    if len(msgs) < n:
        die('only %d of %d message(s) on %s within %ss' % (len(msgs), n, what, timeout))
    ok('%d message(s) on %s, the %s %.1fs after t0' % (len(msgs), what, 'first' if n == 1 else '%dth' % n, msgs[n - 1][0] - t0))

def cmd_time_of(log, topic, t0, payload, timeout):
    t0 = float(t0)
    r = poll(lambda: [m for m in messages(log, topic, t0) if m[2] == payload], float(timeout))
    if not r:
        die("no '%s' on %s within %ss" % (payload, topic, timeout))
    print('%.6f' % r[0][0])

def byte_list(line):
    return bytes(int(x) for x in re.findall(r'dbus\.Byte\((\d+)\)', line)).hex()

def cmd_gatt_log(path, offset, regex, timeout, hexval=None, absent=False):
    rx = re.compile(regex)
    def find():
        try:
            with open(path, 'rb') as f:
                f.seek(int(offset))
                text = f.read().decode('utf-8', 'replace')
        except FileNotFoundError:
            return None
        for line in text.splitlines():
            if rx.search(line) and (hexval is None or byte_list(line) == hexval):
                return line
    what = '/%s/%s' % (regex, ' with bytes %s' % hexval if hexval else '')
    if absent:
        time.sleep(float(timeout))
        line = find()
        if line:
            die('gatt-server.log: unexpected %r' % line)
        ok('gatt-server.log: nothing matching %s within %ss' % (what, timeout))
    line = poll(find, float(timeout), 0.2)
    if not line:
        die('gatt-server.log: no line matching %s within %ss' % (what, timeout))
    ok('gatt-server.log: %s' % line.strip())

ATT_WRITES = {0x12: 'Write Request', 0x52: 'Write Command'}

def att_writes(path, want):
    """[(hci index, TX/RX, ATT/EATT, name, handle)] of ATT writes whose value is `want`."""
    try:
        data = open(path, 'rb').read()
    except FileNotFoundError:
        return None
    if data[:8] != b'btsnoop\0':
        return []
    off, out = 16, []
    while off + 24 <= len(data):
        _, ilen, flags, _, _ = struct.unpack('>IIIIq', data[off:off + 24])
        pkt = data[off + 24:off + 24 + ilen]
        off += 24 + ilen
        if len(pkt) < ilen:
            break
        index, opcode = flags >> 16, flags & 0xffff
        if opcode not in (4, 5) or len(pkt) < 9:       # ACL TX / RX
            continue
        handle, _ = struct.unpack('<HH', pkt[:4])
        if (handle >> 12) & 0x3 == 0x1:                # continuation fragment
            continue
        _, cid = struct.unpack('<HH', pkt[4:8])
        payload = pkt[8:]
        if cid == 4:
            chan = 'ATT'
        elif cid >= 0x40 and len(payload) >= 3:
            chan, payload = 'EATT', payload[2:]         # credit-based SDU length first
        else:
            continue
        if len(payload) >= 3 and payload[0] in ATT_WRITES and payload[3:] == want:
            out.append(('hci%d' % index, 'TX' if opcode == 4 else 'RX', chan,
                        ATT_WRITES[payload[0]], struct.unpack('<H', payload[1:3])[0]))
    return out

def cmd_att(path, hexval, timeout='5'):
    want = bytes.fromhex(hexval)
    r = poll(lambda: att_writes(path, want), float(timeout), 0.3)
    if r is None:
        ok('no btmon capture at %s: ATT not checked' % path)
    for x in r[:6]:
        print('%s %s %s %s handle 0x%04x value %s' % (x + (hexval,)))
    if not r:
        die('btmon.snoop: no ATT write carrying %s within %ss' % (hexval, timeout))
    kinds = sorted(set(x[3] for x in r))
    ok('btmon.snoop: %s' % ', '.join('%s %s' % (k, hexval) for k in kinds))

def cmd_dbus_order(path, t0, dev):
    """The bridge's first call for the peripheral after t0 (Device1.Connect, Adapter1.ConnectDevice,
    or StartNotify/ReadValue under it when the link was already up) and the first
    Adapter1.StartDiscovery after t0, from dbus-monitor; fails when the scan came first."""
    t0 = float(t0)
    head = re.compile(r'^method call time=([\d.]+) .*path=([^;]+); interface=([^;]+); member=(\w+)')
    first = disc = None
    try:
        for line in open(path, errors='replace'):
            m = head.match(line)
            if not m or float(m.group(1)) < t0:
                continue
            t, p, i, member = float(m.group(1)), m.group(2), m.group(3), m.group(4)
            if first is None and (
                    (p == dev and i == 'org.bluez.Device1' and member == 'Connect') or
                    (i == 'org.bluez.Adapter1' and member == 'ConnectDevice') or
                    (p.startswith(dev + '/') and member in ('StartNotify', 'ReadValue'))):
                first = (t, member)
            if disc is None and i == 'org.bluez.Adapter1' and member == 'StartDiscovery':
                disc = t
    except FileNotFoundError:
        ok('no dbus-monitor capture: D-Bus order not checked')
    rel = lambda t: '+%.3fs' % (t - t0)
    msg = 'D-Bus after the restart: %s, StartDiscovery %s' % (
        '%s %s' % (first[1], rel(first[0])) if first else 'no call for the peripheral',
        rel(disc) if disc is not None else 'none')
    if first is None:
        die(msg)
    if disc is not None and disc < first[0]:
        die(msg + ': StartDiscovery came first')
    ok(msg)

def cmd_log_order(path, start_line, addr):
    """In the restarted bridge's log (from start_line): it takes the stored peripheral ("stored
    peripheral ADDR: ...") and connects it ("connecting to ADDR", or "ADDR: connectedChanged(true)"
    when the link is still up) before it starts scanning ("scanning on")."""
    lines = open(path, errors='replace').read().splitlines()[int(start_line):]
    a = re.escape(addr)
    pats = {
        'stored': re.compile(r'stored peripheral %s: ' % a),
        'connect': re.compile(r'connecting to %s\b|%s: connectedChanged\(true\)' % (a, a)),
        'scanning': re.compile(r'scanning on '),
    }
    first = {}
    for n, line in enumerate(lines, 1):
        for k, rx in pats.items():
            if k not in first and rx.search(line):
                first[k] = (n, line)
    for k in ('stored', 'connect', 'scanning'):
        if k in first:
            print('%-8s line %d: %s' % (k, first[k][0], first[k][1][:200]))
    if 'stored' not in first:
        die('the restarted bridge never logged "stored peripheral %s: ..." (state file not used?)' % addr)
    if 'connect' not in first:
        die('the restarted bridge never connected to %s' % addr)
    if 'scanning' in first:
        for k in ('stored', 'connect'):
            if first['scanning'][0] < first[k][0]:
                die('the restarted bridge started scanning (line %d) before it %s %s (line %d)' % (
                    first['scanning'][0], 'took the stored peripheral' if k == 'stored' else 'connected to',
                    addr, first[k][0]))
    ok('log: stored peripheral at line %d, connect at line %d, %s' % (
        first['stored'][0], first['connect'][0],
        'scan at line %d' % first['scanning'][0] if 'scanning' in first else 'no scan started'))

def cmd_publishing_ms(path, start_line, addr, timeout):
    rx = re.compile(r'stored peripheral %s publishing (\d+) ms after start' % re.escape(addr))
    def find():
        for line in open(path, errors='replace').read().splitlines()[int(start_line):]:
            m = rx.search(line)
            if m:
                return m.group(1)
    ms = poll(find, float(timeout), 0.2)
    if not ms:
        die('no "stored peripheral %s publishing N ms after start" within %ss' % (addr, timeout))
    print(ms)

fn = {'result': cmd_result, 'wait-after': cmd_wait_after, 'time-of': cmd_time_of,
      'gatt-log': cmd_gatt_log, 'att': cmd_att, 'dbus-order': cmd_dbus_order,
      'log-order': cmd_log_order, 'publishing-ms': cmd_publishing_ms}
args = sys.argv[1:]
absent = '--absent' in args
args = [a for a in args if a != '--absent']
if args[0] == 'gatt-log':
    cmd_gatt_log(*args[1:], absent=absent)
else:
    fn[args[0]](*args[1:])
PYEOF

rx_py() { "$PY" -c "$RX_PY" "$@"; }

# rx_command TOPIC PAYLOAD [TX_JSON] [TIMEOUT]: publish PAYLOAD on TOPIC (a .../set or .../get),
# print its result. The result is looked up in the recorder's log (it records $BASE/#), so
# there is no subscribe/publish race.
rx_command() {
  local topic=$1 payload=$2 tx=${3:-} to=${4:-20} t0
  t0=$(rx_now)
  echo "publish $topic '$payload'" >&2
  mqtt_pub "$topic" "$payload" || fail "mosquitto_pub to $topic failed" || return
  rx_py result "$MQTT_LOG" "${topic%/*}/result" "$t0" "$to" ${tx:+"$tx"}
}

rx_wait_after() { rx_py wait-after "$MQTT_LOG" "$@"; }
rx_time_of() { rx_py time-of "$MQTT_LOG" "$@"; }
rx_file_size() { stat -c %s "$1" 2>/dev/null || echo 0; }
rx_gatt_log() { rx_py gatt-log "$RX_GATT_LOG" "$@"; }
rx_att() { rx_py att "$RX_SNOOP" "$@"; }

# rx_char_path UUID: the central's object of the peripheral's characteristic UUID (full form)
rx_char_path() {
  "$PY" - "$DEV_PATH" "$1" <<'EOF'
import sys, dbus
dev, uuid = sys.argv[1], sys.argv[2].lower()
om = dbus.Interface(dbus.SystemBus().get_object('org.bluez', '/'), 'org.freedesktop.DBus.ObjectManager')
for p, ifs in om.GetManagedObjects().items():
    c = ifs.get('org.bluez.GattCharacteristic1')
    if c and str(p).startswith(dev + '/') and str(c['UUID']).lower() == uuid:
        print(p); sys.exit(0)
print('BlueZ has no characteristic %s under %s' % (uuid, dev)); sys.exit(1)
EOF
}

# rx_flags PATH: the characteristic's Flags, comma separated
rx_flags() {
  local j
  j=$("${TOOL[@]}" dbus-get "$1" org.bluez.GattCharacteristic1 Flags) || { echo "$j"; return 1; }
  echo "$j" | tr -d '[]" '
}

# rx_start_bridge CONFIG: start the bridge again with CONFIG (output appended to bridge.log
# after a marker line); wait for a bridge/state online published after the start.
# Sets BRIDGE_PID/BRIDGE_RC (lib.sh's), RX_START_T0 and RX_START_LINE (bridge.log lines before).
rx_start_bridge() {
  local config=$1 i
  [ -x "${RB_BRIDGE:-}" ] || fail "no bridge executable at '${RB_BRIDGE:-}' (RB_BRIDGE)" || return
  ! bridge_alive || fail "the bridge is already running (pid $BRIDGE_PID)" || return
  echo "==== rbtest: bridge restarted at $(date -u +%FT%T.%3NZ) with $config" >> "$BRIDGE_LOG"
  RX_START_LINE=$(wc -l < "$BRIDGE_LOG")
  RX_START_T0=$(rx_now)
  "$RB_BRIDGE" run --config "$config" >> "$BRIDGE_LOG" 2>&1 < /dev/null &
  BRIDGE_PID=$! BRIDGE_RC=
  echo "started $RB_BRIDGE (pid $BRIDGE_PID) with $config"
  for i in $(seq 1 300); do
    rx_py time-of "$MQTT_LOG" "$BASE/bridge/state" "$RX_START_T0" online 0 > /dev/null 2>&1 && {
      echo "$BASE/bridge/state online $(since "${RX_START_T0/./}")s after the restart"; return 0; }
    bridge_alive || fail "the restarted bridge exited with status $BRIDGE_RC before publishing $BASE/bridge/state online" || return
    sleep 0.1
  done
  fail "no '$BASE/bridge/state online' within 30s of restarting the bridge"
}

# rx_wait_online SECONDS: the peripheral's availability is (or becomes) online
rx_wait_online() {
  local i topic=$BASE/$DEV/availability
  for i in $(seq 1 $(($1 * 5))); do
    [ "$(last_payload "$topic" 2>/dev/null)" = online ] && return 0
    sleep 0.2
  done
  fail "the peripheral is not online: $topic is '$(last_payload "$topic" 2>/dev/null)' after waiting $1s; $(device_state)"
}

# rx_bluetoothctl SECONDS CMD...: a bluetoothctl session on stdin: select the central
# controller, run each CMD (one per argument, 1 s apart), keep the session SECONDS more, quit.
# Prints the transcript without colour codes.
rx_bluetoothctl() {
  local hold=$1; shift
  { sleep 1; echo "select $RB_CENTRAL_ADDR"; sleep 0.5
    local c; for c in "$@"; do echo "$c"; sleep 1; done
    sleep "$hold"; echo quit; } \
    | timeout $((hold + 10 + $#)) bluetoothctl 2>&1 | sed 's/\x1b\[[0-9;]*[a-zA-Z]//g; s/\r//g' | grep -v '^\s*$'
}

# pids of the processes started as `python3 -u SCRIPT` (how guest-init.sh starts the examples)
rx_pids_of() {
  "$PY" - "$1" <<'EOF2'
import os, sys
for p in os.listdir('/proc'):
    if p.isdigit():
        try:
            a = open('/proc/%s/cmdline' % p, 'rb').read().split(b'\0')
        except OSError:
            continue
        if len(a) >= 3 and b'python' in os.path.basename(a[0]) and a[1] == b'-u' and a[2] == sys.argv[1].encode():
            print(p)
EOF2
}
