# shellcheck shell=bash
# SPEC §14 on the real stack (issue 29): devices added, renamed and removed at run time through
# the bridge's request topics, against bluetoothd 5.66 and the example peripheral.
#   1. a bridge configuration with NO devices and no `bluetooth.services` (a state file of its
#      own in $SUITE/mgmt/, so devices_file is $SUITE/mgmt/devices.json) starts; `scan` with
#      {"seconds": 5} answers ok with the peripheral in data.devices, `configured: null`
#      (btvirt reports RSSI 127 = invalid: rssi null or a number), and the bridge does not
#      connect to it (nothing wants it);
#   2. `device/add` {"name": "vmdev", "match": {"address": ...}} -> ok, data.device "vmdev";
#      {base}/config/devices/vmdev retained with the entry, heart rate values on
#      {base}/vmdev/180d/2a37 without a restart, devices.json holds the entry;
#   3. `device/rename` vmdev -> vmdev2: values on {base}/vmdev2/180d/2a37, config/devices/vmdev2
#      retained (name vmdev2), config/devices/vmdev and vmdev/availability no longer retained;
#   4. the bridge restarted (broker up): it takes vmdev2 from devices_file (its log) and serves it
#      from the start: values on {base}/vmdev2/180d/2a37;
#   5. `device/remove` vmdev2 -> ok; nothing retained under config/devices/ and vmdev2/, nothing
#      published on vmdev2/# after it (2 s grace, then 5 s), the BlueZ link down (Device1.Connected
#      false, or the object removed), no vmdev2 in bridge/devices, devices.json and the state file
#      without it;
#   6. errors: device/remove of an unknown name -> not_found, device/add with a bad address ->
#      invalid_payload (nothing retained under config/devices/);
#   7. the suite's bridge again (always), online again, for 70-... and 90-shutdown.
# Runs after 65-profiles.

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

MG_DIR=$SUITE/mgmt
MG_CONFIG=$SUITE/bridge-management.yaml
MG_DEVICES=$MG_DIR/devices.json
MG_STATE=$MG_DIR/peripherals.json
MG_STARTED=         # set once the bridge runs with $MG_CONFIG

mg_write_config() {
  mkdir -p "$MG_DIR" || return
  rm -f "$MG_DEVICES" "$MG_STATE"
  cat > "$MG_CONFIG" <<EOF
mqtt:
  url: mqtt://${MQTT_HOST}:${MQTT_PORT}
  base_topic: ${BASE}
  client_id: ble-mqtt-bridge-realbluez
bluetooth:
  adapter: ${RB_CENTRAL_ADAPTER}
  services: []
state_file: ${MG_STATE}
log_level: ${RB_LOG_LEVEL:-debug}
EOF
}

# mg_py SUBCOMMAND ARGS...: the group's assertions over mqtt.log and the bridge's files
read -r -d '' MG_PY <<'PYEOF'
import json, sys, time

def die(msg):
    print(' '.join(str(msg).split())); sys.exit(1)

def matches(pattern, topic):
    p, t = pattern.split('/'), topic.split('/')
    for i, seg in enumerate(p):
        if seg == '#':
            return True
        if i >= len(t) or (seg != '+' and seg != t[i]):
            return False
    return len(p) == len(t)

def messages(log, pattern, t0):
    out = []
    for line in open(log, errors='replace'):
        ts, _, rest = line.partition(' ')
        try:
            t, m = float(ts), json.loads(rest)
        except ValueError:
            continue
        p = m.get('payload')
        if not isinstance(p, str):
            p = json.dumps(p, separators=(',', ':'))
        if t >= t0 and matches(pattern, m.get('topic', '')):
            out.append((t, m['topic'], p))
    return out

# quiet LOG FILTER T0 SECONDS: nothing but empty payloads (retained topics being cleared) on FILTER
# from T0 to T0 + SECONDS (waits until then)
def quiet(log, pattern, t0, seconds):
    t0, end = float(t0), float(t0) + float(seconds)
    if time.time() < end:
        time.sleep(end - time.time())
    got = [m for m in messages(log, pattern, t0) if m[0] <= end]
    for t, tp, p in got[:10]:
        print('+%.3fs %s %r' % (t - t0, tp, p[:120]))
    bad = [m for m in got if m[2] != '']
    if bad:
        die('%d message(s) on %s in the %ss from +0: the first %s %r at +%.1fs'
            % (len(bad), pattern, seconds, bad[0][1], bad[0][2][:120], bad[0][0] - t0))
    print('nothing on %s for %ss (%d empty payload(s): retained topics cleared)' % (pattern, seconds, len(got)))

# file-devices PATH WANT_JSON: devices_file is {"devices": WANT}
def file_devices(path, want):
    want = json.loads(want)
    end = time.time() + 5
    while True:
        try:
            got = json.load(open(path))
        except (OSError, ValueError) as e:
            got = 'unreadable: %s' % e
        if isinstance(got, dict) and got.get('devices') == want:
            print('%s: %s' % (path, json.dumps(got, separators=(',', ':'))))
            return
        if time.time() >= end:
            die('%s is %s, expected {"devices": %s}' % (path, json.dumps(got) if isinstance(got, dict) else got,
                                                        json.dumps(want, separators=(',', ':'))))
        time.sleep(0.2)

# state-without PATH ADDRESS: the state file does not list ADDRESS (the device was forgotten)
def state_without(path, address):
    end = time.time() + 5
    while True:
        try:
            got = json.load(open(path))
            addrs = [str(p.get('address', '')).upper() for p in got.get('peripherals', [])]
        except (OSError, ValueError, AttributeError) as e:
            die('%s: %s' % (path, e))
        if address.upper() not in addrs:
            print('%s: peripherals %s' % (path, addrs))
            return
        if time.time() >= end:
            die('%s still lists %s after 5s: %s' % (path, address, json.dumps(got)))
        time.sleep(0.2)

fn = {'quiet': quiet, 'file-devices': file_devices, 'state-without': state_without}
fn[sys.argv[1]](*sys.argv[2:])
PYEOF
mg_py() { "$PY" -c "$MG_PY" "$@"; }

# mg_request COMMAND PAYLOAD TX [SECONDS]: publish on {base}/bridge/request/COMMAND, print the
# answer on {base}/bridge/response/COMMAND whose transaction is TX (from the recorder's log).
# Callers take $(rx_now) before it when they need the time of the request (it runs in $(...)).
mg_request() {
  local cmd=$1 payload=$2 tx=$3 to=${4:-15} t0
  t0=$(rx_now)
  echo "publish $BASE/bridge/request/$cmd '$payload'" >&2
  mqtt_pub "$BASE/bridge/request/$cmd" "$payload" || fail "mosquitto_pub to $BASE/bridge/request/$cmd failed" || return
  rx_py result "$MQTT_LOG" "$BASE/bridge/response/$cmd" "$t0" "$to" "\"$tx\""
}

# mg_retained_gone TOPIC SECONDS: a fresh subscriber gets nothing retained on TOPIC (polled)
mg_retained_gone() {
  local i got
  for i in $(seq 1 "$2"); do
    got=$(retained "$1" 1)
    [ -z "$got" ] && { echo "nothing retained on $1"; return 0; }
    sleep 0.5
  done
  fail "$1 is still retained after ${2}s: '${got#* }'"
}

# mg_retained_json TOPIC EXPR WHAT: TOPIC retained, its JSON satisfies EXPR
mg_retained_json() {
  local got
  got=$(retained "$1")
  [ -n "$got" ] || fail "a fresh subscriber to $1 got nothing within 5s (not retained?)" || return
  [ "${got%% *}" = 1 ] || fail "$1: '${got#* }' arrived without the retain flag" || return
  echo "$1 (retained): ${got#* }"
  json_expect "${got#* }" "$2" "$3"
}

mg_need() {
  need_bridge || return
  [ -n "$MG_STARTED" ] || fail "the bridge never ran with $MG_CONFIG (management_scan failed)"
}

management_scan() {
  local r out
  need_bridge || return
  mg_write_config || fail "cannot write $MG_CONFIG" || return
  out=$("$RB_BRIDGE" check-config --config "$MG_CONFIG" 2>&1) || fail "check-config rejects $MG_CONFIG: $out" || return
  echo "check-config: ${out##*$'\n'}"
  stop_bridge TERM 20 || return
  rx_start_bridge "$MG_CONFIG" || return
  MG_STARTED=1
  r=$(mg_request scan '{"seconds": 5, "transaction": "s1"}' s1 20) || fail "$r" || return
  echo "answer: $r"
  json_expect "$r" "(v['status'] == 'ok' and v['transaction'] == 's1' and isinstance(v['data']['devices'], list))" \
    "scan answer" || return
  json_expect "$r" "[d for d in v['data']['devices'] if d['address'] == '$RB_PERIPH_ADDR'
                     and d['configured'] is None and (d['rssi'] is None or type(d['rssi']) is int)
                     and d['address_type'] in ('public', 'random')]" \
    "the peripheral $RB_PERIPH_ADDR in data.devices with configured null" || return
  # nothing wants it: the bridge did not connect to it
  out=$(retained "$BASE/bridge/devices")
  echo "bridge/devices: ${out#* }"
  json_expect "${out#* }" "not any(d.get('connected') for d in v)" "nothing connected before device/add" || return
  echo "scan (5 s): ok, $RB_PERIPH_ADDR heard with configured null; $(echo "$r" | "$PY" -c 'import json,sys; v=json.load(sys.stdin); print(len(v["data"]["devices"]), "advertiser(s):", ", ".join("%s %s rssi %s" % (d["address"], d["name"], d["rssi"]) for d in v["data"]["devices"]))')"
}

management_add() {
  local r t0 entry
  mg_need || return
  entry="{\"name\":\"vmdev\",\"match\":{\"address\":\"$RB_PERIPH_ADDR\"}}"
  t0=$(rx_now)
  r=$(mg_request device/add "{\"name\":\"vmdev\",\"match\":{\"address\":\"$RB_PERIPH_ADDR\"},\"transaction\":\"a1\"}" a1) \
    || fail "$r" || return
  echo "answer: $r"
  json_expect "$r" "v['status'] == 'ok' and v['transaction'] == 'a1' and v['data']['device'] == 'vmdev'" \
    "device/add answer" || return
  mg_retained_json "$BASE/config/devices/vmdev" \
    "v == {'name': 'vmdev', 'match': {'address': '$RB_PERIPH_ADDR'}}" "config/devices/vmdev" || return
  rx_wait_after "$BASE/vmdev/180d/2a37" "$t0" 3 45 || fail "$(device_state)" || return
  "${TOOL[@]}" hr "$MQTT_LOG" "$BASE/vmdev/180d/2a37" 3 --max-interval 30 --max-gap 30 > /dev/null || fail "values on $BASE/vmdev/180d/2a37 do not decode" || return
  mg_py file-devices "$MG_DEVICES" "[$entry]" || return
  echo "device/add vmdev: ok, config/devices/vmdev retained, heart rate on $BASE/vmdev/180d/2a37 without a restart, devices.json holds it"
}

management_rename() {
  local r t0
  mg_need || return
  t0=$(rx_now)
  r=$(mg_request device/rename '{"device":"vmdev","name":"vmdev2","transaction":"r1"}' r1) || fail "$r" || return
  echo "answer: $r"
  json_expect "$r" "v['status'] == 'ok' and v['transaction'] == 'r1'" "device/rename answer" || return
  rx_wait_after "$BASE/vmdev2/180d/2a37" "$t0" 3 45 || fail "$(device_state)" || return
  mg_retained_json "$BASE/config/devices/vmdev2" \
    "v == {'name': 'vmdev2', 'match': {'address': '$RB_PERIPH_ADDR'}}" "config/devices/vmdev2" || return
  mg_retained_gone "$BASE/config/devices/vmdev" 10 || return
  mg_retained_gone "$BASE/vmdev/availability" 20 || return
  mg_py file-devices "$MG_DEVICES" "[{\"name\":\"vmdev2\",\"match\":{\"address\":\"$RB_PERIPH_ADDR\"}}]" || return
  echo "device/rename vmdev -> vmdev2: ok, values on $BASE/vmdev2/180d/2a37, vmdev's config entry and availability no longer retained"
}

management_restart() {
  mg_need || return
  stop_bridge TERM 20 || return
  rx_start_bridge "$MG_CONFIG" || return
  tail -n +"$((RX_START_LINE + 1))" "$BRIDGE_LOG" | grep -m1 'device(s) added at run time, from devices_file' \
    || fail "the restarted bridge did not log taking its devices from devices_file" || return
  rx_wait_after "$BASE/vmdev2/180d/2a37" "$RX_START_T0" 3 60 || fail "$(device_state)" || return
  rx_wait_online_seg vmdev2 10 || return
  echo "restarted: vmdev2 from devices_file, heart rate on $BASE/vmdev2/180d/2a37 again"
}

# rx_wait_online_seg SEGMENT SECONDS: {base}/SEGMENT/availability is online
rx_wait_online_seg() {
  local i
  for i in $(seq 1 $(($2 * 5))); do
    [ "$(last_payload "$BASE/$1/availability" 2>/dev/null)" = online ] && { echo "$BASE/$1/availability online"; return 0; }
    sleep 0.2
  done
  fail "$BASE/$1/availability is '$(last_payload "$BASE/$1/availability" 2>/dev/null)', not online"
}

management_remove() {
  local r out devs
  mg_need || return
  r=$(mg_request device/remove '{"device":"vmdev2","transaction":"d1"}' d1) || fail "$r" || return
  echo "answer: $r"
  json_expect "$r" "v['status'] == 'ok' and v['transaction'] == 'd1'" "device/remove answer" || return
  out=$("${TOOL[@]}" dbus-wait "$DEV_PATH" org.bluez.Device1 Connected false 15) || case "$out" in
    *UnknownObject*|*"doesn't exist"*) out="BlueZ has no $DEV_PATH any more (removed)" ;;
    *) fail "the link is still up: $out" || return ;;
  esac
  echo "$out"
  mg_retained_gone "$BASE/config/devices/vmdev2" 10 || return
  no_retained "$BASE/config/devices/#" || return
  mg_retained_gone "$BASE/vmdev2/availability" 20 || return
  no_retained "$BASE/vmdev2/#" || return
  mg_py quiet "$MQTT_LOG" "$BASE/vmdev2/#" "$(awk -v t="$(rx_now)" 'BEGIN { printf "%.6f", t + 2 }')" 5 || return
  devs=$(retained "$BASE/bridge/devices")
  echo "bridge/devices: ${devs#* }"
  json_expect "${devs#* }" "all(d.get('name') != 'vmdev2' and not (d.get('address') == '$RB_PERIPH_ADDR' and d.get('connected')) for d in v)" \
    "no vmdev2 (and the peripheral not connected) in bridge/devices" || return
  mg_py file-devices "$MG_DEVICES" "[]" || return
  mg_py state-without "$MG_STATE" "$RB_PERIPH_ADDR" || return
  echo "device/remove vmdev2: ok, retained topics cleared, nothing on $BASE/vmdev2/#, link down, devices.json and the state file without it"
}

management_errors() {
  local r
  mg_need || return
  r=$(mg_request device/remove '{"device":"nosuchdevice","transaction":"e1"}' e1) || fail "$r" || return
  echo "answer: $r"
  json_expect "$r" "v['status'] == 'error' and v['transaction'] == 'e1' and v['error']['code'] == 'not_found'" \
    "device/remove of an unknown name" || return
  r=$(mg_request device/add '{"name":"baddev","match":{"address":"00:AA:01:00:00"},"transaction":"e2"}' e2) || fail "$r" || return
  echo "answer: $r"
  json_expect "$r" "(v['status'] == 'error' and v['transaction'] == 'e2' and v['error']['code'] == 'invalid_payload'
                     and len(v['error']['message']) > 0)" "device/add with a bad address" || return
  no_retained "$BASE/config/devices/#" || return
  echo "device/remove nosuchdevice: not_found; device/add with address 00:AA:01:00:00: invalid_payload, nothing retained"
}

management_bridge_again() {
  need_bridge || return
  stop_bridge TERM 20 || return
  rx_start_bridge "$BRIDGE_CONFIG" || return
  rx_wait_online 60
}

check management_scan management_scan
check management_add management_add
check management_rename management_rename
check management_restart management_restart
check management_remove management_remove
check management_errors management_errors
check management_bridge_again management_bridge_again
