# shellcheck shell=bash
# SPEC §15 on the real stack (issue 31): a user profile run through bluetoothd 5.66 against the
# example peripheral's test characteristic 12345678-...def1 (read, write: it stores what is
# written and a read returns it; gatt-server.log prints "TestCharacteristic Write/Read: [...]").
#   1. a profile `vm_echo` in a profiles_dir of this run ($SUITE/profiles/vm_echo.yaml, below) and
#      a bridge configuration whose only device is the peripheral with `profile: vm_echo` and no
#      `connection` (the profile's `connection: poll`, `interval: 5s` apply): check-config
#      accepts it and counts the user profile;
#   2. the bridge restarted with it: every cycle connects, writes a0 1f 64 and reads it back
#      (the peripheral's log: the write, then the read, in that order, cycle after cycle),
#      {base}/{device}/values gets {"profile":"vm_echo","values":{"echo_word":8096,"battery":100}}
#      ("<HB": 0x1fa0, 0x64) once per cycle, not retained, and the link is down between cycles
#      (bridge/devices connected true -> false, twice);
#   3. only the profile's steps run: no §3 reads or subscriptions (nothing on 2A37, 2A38, 2A19
#      since the restart);
#   4. the named command `set` with {"value": 4660}: result {"status":"ok","op":"command",
#      "transaction":...}, the peripheral got 34 12 32 ({value|u16le} 32), the values read back
#      are {"echo_word":4660,"battery":50}, and a later cycle writes a0 1f 64 again (8096);
#   5. an unknown command -> unknown_command, a parameter out of range -> invalid_payload, and
#      nothing is written to the peripheral for either;
#   6. the suite's bridge again (always), online again, for 70-... and 90-shutdown.
# Runs after 60-poll.

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

RP_DIR=$SUITE/profiles
RP_CONFIG=$SUITE/bridge-profile.yaml
RP_VALUES=$BASE/$DEV/values
RP_CMD=$BASE/$DEV/command
RP_T0=              # recorder time of the restart with the profile (rx_now)
RP_GATT_OFF=0       # gatt-server.log offset at that restart

# the profile (SPEC §15): a write-then-read device, plus a command that writes its parameter and
# reads it back
rp_write_profile() {
  mkdir -p "$RP_DIR" || return
  cat > "$RP_DIR/vm_echo.yaml" <<'EOF'
# The example GATT server's test characteristic stores what is written and returns it on a read:
# a device that answers with what its "mode" write set, like a Mi Flora's a0 1f before the read.
id: vm_echo
manufacturer: BlueZ
model: example-gatt-server
recognize: { services: ["12345678-1234-5678-1234-56789abcdef0"] }
connection: poll
interval: 5s
values:
  echo_word: {}                   # a name of this profile's own; battery is a known one (%)
steps:
  - write: { characteristic: "12345678-1234-5678-1234-56789abcdef1", value: "a01f 64", response: true }
  - read: { characteristic: "12345678-1234-5678-1234-56789abcdef1", decode: echo }
decode:
  echo: { struct: "<HB", fields: { echo_word: "", battery: "" } }
commands:
  set:
    parameters: { value: { min: 0, max: 65535 } }
    steps:
      - write: { characteristic: "12345678-1234-5678-1234-56789abcdef1", value: "{value|u16le} 32" }
      - read: { characteristic: "12345678-1234-5678-1234-56789abcdef1", decode: echo }
EOF
}

# the bridge's configuration: the suite's broker, adapter and state file; the peripheral with the profile
rp_write_config() {
  cat > "$RP_CONFIG" <<EOF
mqtt:
  url: mqtt://${MQTT_HOST}:${MQTT_PORT}
  base_topic: ${BASE}
  client_id: ble-mqtt-bridge-realbluez
bluetooth:
  adapter: ${RB_CENTRAL_ADAPTER}
  services: ["180d"]
state_file: ${SUITE}/state/peripherals.json
log_level: ${RB_LOG_LEVEL:-debug}
profiles_dir: ${RP_DIR}
devices:
  - match: { address: "${RB_PERIPH_ADDR}" }
    profile: vm_echo
EOF
}

profile_config_valid() {
  local out
  [ -x "${RB_BRIDGE:-}" ] || fail "no bridge executable at '${RB_BRIDGE:-}' (RB_BRIDGE)" || return
  rp_write_profile || fail "cannot write $RP_DIR/vm_echo.yaml" || return
  rp_write_config || fail "cannot write $RP_CONFIG" || return
  out=$("$RB_BRIDGE" check-config --config "$RP_CONFIG" 2>&1) || fail "check-config rejects $RP_CONFIG: $out" || return
  echo "$out"
  [[ $out == *"1 from $RP_DIR"* ]] || fail "check-config did not count the user profile of $RP_DIR: ${out##*$'\n'}" || return
  echo "check-config accepts $RP_CONFIG with vm_echo from $RP_DIR"
}

# rp_py SUBCOMMAND ARGS...: the group's assertions over mqtt.log and gatt-server.log
read -r -d '' RP_PY <<'PYEOF'
import json, re, sys, time

def die(msg):
    print(' '.join(str(msg).split())); sys.exit(1)

def payload_of(m):
    p = m.get('payload')
    return p if isinstance(p, str) else json.dumps(p, separators=(',', ':'))

def messages(log, t0):
    out = []
    for line in open(log, errors='replace'):
        ts, _, rest = line.partition(' ')
        try:
            t, m = float(ts), json.loads(rest)
        except ValueError:
            continue
        if t >= t0:
            out.append((t, m.get('topic', ''), payload_of(m), m.get('retain')))
    return out

def values_of(p):
    try:
        v = json.loads(p)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None

def gatt_lines(path, offset):
    """[(kind, hex)] of the test characteristic's writes and reads in gatt-server.log after offset."""
    with open(path, 'rb') as f:
        f.seek(int(offset))
        text = f.read().decode('utf-8', 'replace')
    out = []
    for line in text.splitlines():
        m = re.match(r'^TestCharacteristic (Write|Read): ', line)
        if m:
            out.append((m.group(1), bytes(int(x) for x in re.findall(r'dbus\.Byte\((\d+)\)', line)).hex()))
    return out

def poll(fn, timeout):
    end = time.time() + timeout
    while True:
        r = fn()
        if r[0] or time.time() >= end:
            return r
        time.sleep(0.5)

# cycles LOG GATTLOG OFFSET BASE DEV T0 N TIMEOUT: N values messages, each the write-then-read's,
# the peripheral's log write a01f64 then read a01f64 per cycle, the link down between cycles
def cycles(log, gatt, offset, base, dev, t0, n, timeout):
    t0, n, want = float(t0), int(n), {'profile': 'vm_echo', 'values': {'echo_word': 8096, 'battery': 100}}
    vt = '%s/%s/values' % (base, dev)
    def state():
        vals, links = [], []
        for t, topic, p, retain in messages(log, t0):
            if topic == vt:
                vals.append((t, p, retain))
            elif topic == base + '/bridge/devices':
                for e in (json.loads(p or '[]') or []):
                    if e.get('name') == dev:
                        if not links or links[-1] != e.get('connected'):
                            links.append(e.get('connected'))
        downs = sum(1 for a, b in zip(links, links[1:]) if a and not b)
        return (len(vals) >= n and downs >= n - 1, vals, links, downs)
    done, vals, links, downs = poll(state, float(timeout))
    for t, p, retain in vals[:8]:
        print('+%.3fs %s %s%s' % (t - t0, vt, p, ' (retained)' if retain else ''))
    if not done:
        die('after %ss: %d values message(s) (want %d), connected in bridge/devices %s (want %d disconnects)'
            % (timeout, len(vals), n, links, n - 1))
    bad = [p for _, p, _ in vals if values_of(p) != want]
    if bad:
        die('values not %s: %s' % (json.dumps(want, separators=(',', ':')), bad[:3]))
    if any(r for _, _, r in vals):
        die('a values message arrived retained')
    g = gatt_lines(gatt, offset)
    print('gatt-server.log since the restart: %s' % ' '.join('%s:%s' % x for x in g[:12]))
    pairs = sum(1 for a, b in zip(g, g[1:]) if a == ('Write', 'a01f64') and b == ('Read', 'a01f64'))
    if pairs < n:
        die('the peripheral saw write a01f64 then read a01f64 %d time(s), want %d: %s' % (pairs, n, g[:12]))
    gaps = ['%.1f' % (b[0] - a[0]) for a, b in zip(vals, vals[1:])]
    print('%d cycles: write a01f64 then read (peripheral) %d times, values %s s apart; connected in bridge/devices %s'
          % (len(vals), pairs, ', '.join(gaps), links))

# silent LOG T0 TOPIC...: no message on any of these topics since T0
def silent(log, t0, *topics):
    got = [(t, tp) for t, tp, _, _ in messages(log, float(t0)) if tp in topics]
    if got:
        die('published since the restart: %s' % ', '.join(sorted(set(tp for _, tp in got))))
    print('nothing on %s since the restart' % ', '.join(topics))

# values-after LOG TOPIC T0 ECHO BATTERY TIMEOUT: the first values message after T0 with these values;
# prints its recorder time
def values_after(log, topic, t0, echo, battery, timeout):
    want = {'profile': 'vm_echo', 'values': {'echo_word': int(echo), 'battery': int(battery)}}
    def find():
        seen = [(t, p) for t, tp, p, _ in messages(log, float(t0)) if tp == topic]
        hit = [t for t, p in seen if values_of(p) == want]
        return (hit[0] if hit else None, seen)
    hit, seen = poll(find, float(timeout))
    if hit is None:
        die('no values %s on %s within %ss; seen: %s' % (json.dumps(want['values']), topic, timeout,
                                                          [p for _, p in seen][:5]))
    print('%.6f' % hit)

# gatt-writes GATTLOG OFFSET: the hex of every test characteristic write after OFFSET
def gatt_writes(gatt, offset):
    print(' '.join(h for k, h in gatt_lines(gatt, offset) if k == 'Write'))

fn = {'cycles': cycles, 'silent': silent, 'values-after': values_after, 'gatt-writes': gatt_writes}
fn[sys.argv[1]](*sys.argv[2:])
PYEOF
rp_py() { "$PY" -c "$RP_PY" "$@"; }

profile_poll_cycles() {
  need_bridge || return
  [ -s "$RP_CONFIG" ] || fail "no $RP_CONFIG (profile_config_valid failed)" || return
  stop_bridge TERM 20 || return
  RP_GATT_OFF=$(rx_file_size "$RX_GATT_LOG")
  rx_start_bridge "$RP_CONFIG" || return
  RP_T0=$RX_START_T0
  rp_py cycles "$MQTT_LOG" "$RX_GATT_LOG" "$RP_GATT_OFF" "$BASE" "$DEV" "$RP_T0" 3 60
}

# SPEC §15: a device with a profile runs only its profile's steps
profile_steps_only() {
  need_bridge || return
  [ -n "$RP_T0" ] || fail "the bridge was not restarted with the profile (profile_poll_cycles)" || return
  rp_py silent "$MQTT_LOG" "$RP_T0" "$BASE/$DEV/180d/2a37" "$BASE/$DEV/180d/2a38" "$BASE/$DEV/180f/2a19"
}

profile_command_set() {
  local r t0 off tv tr writes
  need_bridge || return
  [ -n "$RP_T0" ] || fail "the bridge was not restarted with the profile (profile_poll_cycles)" || return
  off=$(rx_file_size "$RX_GATT_LOG")
  t0=$(rx_now)
  r=$(rx_command "$RP_CMD/set/set" '{"value":4660,"transaction":"rb-65-set"}' '"rb-65-set"' 30) || fail "$r" || return
  echo "result: $r"
  json_expect "$r" '(v["status"] == "ok" and v["op"] == "command" and v["transaction"] == "rb-65-set"
                    and "error" not in v)' "result of command/set" || return
  tr=$(rx_time_of "$RP_CMD/set/result" "$t0" "$r" 1) || fail "$tr" || return
  rx_gatt_log "$off" '^TestCharacteristic Write: ' 5 341232 || return
  tv=$(rp_py values-after "$MQTT_LOG" "$RP_VALUES" "$t0" 4660 50 10) || fail "$tv" || return
  echo "values 4660/50 $(rx_diff "$tv" "$t0")s after the command, its result $(rx_diff "$tr" "$t0")s after it"
  # the next cycle writes a0 1f 64 again: the poll goes on after the command
  rp_py values-after "$MQTT_LOG" "$RP_VALUES" "$tv" 8096 100 20 > /dev/null || fail "no cycle after the command: values 8096/100 not seen within 20s" || return
  writes=$(rp_py gatt-writes "$RX_GATT_LOG" "$off")
  echo "the peripheral's writes since the command: $writes"
  echo "command set {value: 4660}: ok (op command), 341232 written, values echo_word 4660 battery 50 read back, the next cycle 8096 again"
}

profile_command_refused() {
  local r off writes
  need_bridge || return
  [ -n "$RP_T0" ] || fail "the bridge was not restarted with the profile (profile_poll_cycles)" || return
  off=$(rx_file_size "$RX_GATT_LOG")
  r=$(rx_command "$RP_CMD/nope/set" '{"transaction":"rb-65-u"}' '"rb-65-u"' 15) || fail "$r" || return
  echo "result: $r"
  json_expect "$r" '(v["status"] == "error" and v["op"] == "command" and v["transaction"] == "rb-65-u"
                    and v["error"]["code"] == "unknown_command")' "result of command/nope" || return
  r=$(rx_command "$RP_CMD/set/set" '{"value":70000,"transaction":"rb-65-p"}' '"rb-65-p"' 15) || fail "$r" || return
  echo "result: $r"
  json_expect "$r" '(v["status"] == "error" and v["op"] == "command" and v["transaction"] == "rb-65-p"
                    and v["error"]["code"] == "invalid_payload")' "result of command/set with value 70000" || return
  # refused before anything is written (a write would have reached the peripheral before the
  # result): the poll cycles' a01f64 is all the peripheral may have got since
  writes=$(rp_py gatt-writes "$RX_GATT_LOG" "$off")
  echo "the peripheral's writes since: ${writes:-none}"
  local w
  for w in $writes; do [ "$w" = a01f64 ] || fail "an unexpected write $w after the refused command" || return; done
  echo "command/nope: unknown_command; set {value: 70000}: invalid_payload; nothing but the cycles' a01f64 written"
}

profiles_bridge_again() {
  need_bridge || return
  stop_bridge TERM 20 || return
  rx_start_bridge "$BRIDGE_CONFIG" || return
  rx_wait_online 60
}

check profile_config_valid profile_config_valid
check profile_poll_cycles profile_poll_cycles
check profile_steps_only profile_steps_only
check profile_command_set profile_command_set
check profile_command_refused profile_command_refused
check profiles_bridge_again profiles_bridge_again
