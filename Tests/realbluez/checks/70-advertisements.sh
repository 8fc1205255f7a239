# shellcheck shell=bash
# SPEC §7 on the real stack: a `connection: advertisement` device, never connected.
#   1. the suite's bridge stops (the link to the peripheral goes down); the example
#      advertisements on the peripheral's controller are replaced by BTHome v2 service data
#      (UUID fcd2) from Tests/realbluez/bthome-adv.py: two LEAdvertisement1 instances of Type
#      "peripheral" with the same data, so the kernel rotates them every 2 s and btvirt sends a
#      report each time (a "broadcast" advertisement would come from a new non-resolvable
#      random address every time, not from the peripheral's address);
#   2. the bridge with that address as `connection: advertisement` (name rb_bthome; the rest
#      of the suite's config as it is, services ["180d"] and the state file that knows the
#      address as a GATT peripheral included): {base}/rb_bthome/advertisement with decoder
#      bthome_v2 and the decoded values, availability online, each packet published once
#      though BlueZ reports it every 2 s, a new packet id published again, discovery with
#      DuplicateData; never connected (bluetoothd: Connected false, no Connect/ConnectDevice/
#      Pair on D-Bus, bridge/devices connected false);
#   3. encrypted BTHome (bindkey; frames sealed here with python3-cryptography, AES-CCM):
#      decoded; a frame with a wrong key, a plaintext frame and a counter that did not
#      increase are dropped; availability offline once nothing arrives for advertisement.timeout;
#   4. the example advertisements and the suite's bridge again (always), online, for 90-shutdown.
# Runs after 60-poll and before 90-shutdown.

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

AD_NAME=rb_bthome
AD_TOPIC=$BASE/$AD_NAME/advertisement
AD_AVAIL=$BASE/$AD_NAME/availability
AD_KEY=5fa2c4e8b1d3079a6c8e0f2d4b6a8c1e
AD_TIMEOUT=8
AD_PLAIN_CONFIG=$SUITE/bridge-adv.yaml
AD_CRYPT_CONFIG=$SUITE/bridge-adv-bindkey.yaml
AD_HEX=$SUITE/bthome-adv.hex              # what the advertiser advertises (it polls the file)
AD_LOG=$SUITE/bthome-adv.log
AD_TOOL=("$PY" "$RB_TESTS/bthome-adv.py")
AD_PID= AD_EXAMPLES_STOPPED= AD_T0= AD_T1= AD_EXAMPLE_ADV=


# ad_frame ARGS...: BTHome service data hex (bthome-adv.py frame)
ad_frame() { "${AD_TOOL[@]}" frame "$@"; }

# ad_advertise HEX: make the advertiser advertise HEX; wait until it registered it; print the time
ad_advertise() {
  local hex=$1 t i
  t=$(rx_now)
  echo "$hex" > "$AD_HEX.tmp" && mv "$AD_HEX.tmp" "$AD_HEX"
  for i in $(seq 1 100); do
    grep -q "registered 2 instance(s) data $hex\$" "$AD_LOG" 2>/dev/null && { echo "$t"; return 0; }
    grep -q "register failed" "$AD_LOG" 2>/dev/null && break
    sleep 0.1
  done
  fail "the advertiser did not register $hex: $(tail -n 3 "$AD_LOG" | tr '\n' ' ')"
}

read -r -d '' AD_PY <<'PYEOF'
import json, re, sys, time

def die(msg):
    print(' '.join(str(msg).split())); sys.exit(1)

def messages(log, topic, t0):
    out = []
    for line in open(log, encoding='utf-8', errors='replace'):
        ts, _, rest = line.partition(' ')
        try:
            m, t = json.loads(rest), float(ts)
        except ValueError:
            continue
        if t >= t0 and m.get('topic') == topic:
            p = m.get('payload')
            try:
                v = json.loads(p) if isinstance(p, str) else p
            except ValueError:
                v = p
            out.append((t, v))
    return out

def cmd_packet(log, topic, t0, packet_id, timeout, values, hexdata, since='it was advertised'):
    """the first message on topic after t0 with packet_id; decoder, values and service data as given"""
    t0, pid, want = float(t0), int(packet_id), json.loads(values)
    end = time.time() + float(timeout)
    while True:
        got = [(t, v) for t, v in messages(log, topic, t0) if isinstance(v, dict) and v.get('packet_id') == pid]
        if got or time.time() > end:
            break
        time.sleep(0.2)
    if not got:
        seen = [v.get('packet_id') if isinstance(v, dict) else v for _, v in messages(log, topic, t0)]
        die('no message with packet_id %d on %s within %ss (packet ids seen: %s)' % (pid, topic, timeout, seen))
    t, v = got[0]
    print(json.dumps(v))
    problems = []
    if v.get('decoder') != 'bthome_v2':
        problems.append('decoder %r' % v.get('decoder'))
    if v.get('values') != want:
        problems.append('values %s, expected %s' % (json.dumps(v.get('values')), json.dumps(want)))
    sd = v.get('service_data') or {}
    if sd.get('fcd2') != hexdata:
        problems.append('service_data %s, expected fcd2 = %s' % (json.dumps(sd), hexdata))
    if problems:
        die('packet %d: %s' % (pid, '; '.join(problems)))
    print('service_data %s, manufacturer_data %s' % (json.dumps(sd), json.dumps(v.get('manufacturer_data'))))
    print('packet %d published %.2fs after %s: values %s, rssi %s'
          % (pid, t - t0, since, json.dumps(v['values']), v.get('rssi')))

def cmd_packets(log, topic, t0):
    """packet ids published on topic since t0, in order"""
    print(' '.join(str(v.get('packet_id')) if isinstance(v, dict) else repr(v) for _, v in messages(log, topic, float(t0))))

HEAD = re.compile(r'^(signal|method call|method return|error) time=([\d.]+) sender=(\S+) -> destination=(\S+)(.*)$')

def blocks(path, t0):
    cur = None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        m = HEAD.match(line)
        if m:
            if cur and cur['t'] >= t0:
                yield cur
            rest = m.group(5)
            f = lambda k: (re.search(k + r'=([^;\s]+)', rest) or [None, ''])[1]
            cur = {'kind': m.group(1), 't': float(m.group(2)), 'path': f('path'), 'iface': f('interface'),
                   'member': f('member'), 'body': []}
        elif cur is not None:
            cur['body'].append(line.strip())
    if cur and cur['t'] >= t0:
        yield cur

def cmd_never_connected(path, t0, dev, addr):
    """no Connect / ConnectDevice / Pair for the device in the dbus-monitor capture since t0"""
    bad, n = [], 0
    for b in blocks(path, float(t0)):
        n += 1
        if b['kind'] != 'method call':
            continue
        body = ' '.join(b['body'])
        if (b['path'] == dev and b['member'] in ('Connect', 'ConnectProfile', 'Pair')) or \
           (b['member'] == 'ConnectDevice' and addr.upper() in body.upper()) or \
           (b['path'].startswith(dev + '/') and b['member'] in ('ReadValue', 'WriteValue', 'StartNotify', 'AcquireNotify')):
            bad.append('%s.%s %s at +%.1fs' % (b['iface'], b['member'], b['path'], b['t'] - float(t0)))
    if bad:
        die('D-Bus calls that connect or use the device: ' + ', '.join(bad[:5]))
    print('dbus-monitor: %d messages since the bridge started, no Connect, ConnectDevice, Pair or GATT call for %s' % (n, dev))

def cmd_filter(path, t0):
    """the SetDiscoveryFilter calls since t0: DuplicateData true, no UUIDs"""
    calls = [b for b in blocks(path, float(t0)) if b['kind'] == 'method call' and b['member'] == 'SetDiscoveryFilter']
    starts = [b for b in blocks(path, float(t0)) if b['kind'] == 'method call' and b['member'] == 'StartDiscovery']
    if not calls:
        die('no SetDiscoveryFilter since the bridge started (%d StartDiscovery)' % len(starts))
    for b in calls:
        body = ' '.join(b['body'])
        dup = re.search(r'"DuplicateData"\s+variant\s+boolean\s+(\w+)', body)
        uuids = [u for u in re.findall(r'string "([^"]+)"', body)
                 if u not in ('UUIDs', 'DuplicateData', 'Transport', 'RSSI', 'Pathloss', 'Discoverable', 'Pattern',
                              'le', 'bredr', 'auto')]
        if not dup or dup.group(1) != 'true' or uuids:
            die('SetDiscoveryFilter on %s: %s (want DuplicateData true, no UUIDs)' % (b['path'], body[:300]))
    print('%d SetDiscoveryFilter call(s) with DuplicateData true and no UUIDs, %d StartDiscovery, first at +%.2fs'
          % (len(calls), len(starts), calls[0]['t'] - float(t0)))

def cmd_reports(path, t0, t1, dev):
    """ServiceData changes BlueZ signalled for the device between t0 and t1"""
    n = 0
    for b in blocks(path, float(t0)):
        if b['t'] <= float(t1) and b['kind'] == 'signal' and b['path'] == dev and b['member'] == 'PropertiesChanged' \
                and any('"ServiceData"' in x for x in b['body']):
            n += 1
    print(n)

fn = {'packet': cmd_packet, 'packets': cmd_packets, 'never-connected': cmd_never_connected,
      'filter': cmd_filter, 'reports': cmd_reports}
fn[sys.argv[1]](*sys.argv[2:])
PYEOF

ad_py() { "$PY" -c "$AD_PY" "$@"; }

# the suite's config with the peripheral's entry replaced by an advertisement device
ad_configs() {
  [ -s "$BRIDGE_CONFIG" ] || fail "no $BRIDGE_CONFIG" || return
  local head
  head=$(sed '/^devices:/,$d' "$BRIDGE_CONFIG")
  printf '%s\ndevices:\n  - match: { address: "%s" }\n    name: %s\n    connection: advertisement\n' \
    "$head" "$RB_PERIPH_ADDR" "$AD_NAME" > "$AD_PLAIN_CONFIG"
  printf '%s\ndevices:\n  - match: { address: "%s" }\n    name: %s\n    connection: advertisement\n    advertisement: { bindkey: "%s", timeout: %ss }\n' \
    "$head" "$RB_PERIPH_ADDR" "$AD_NAME" "$AD_KEY" "$AD_TIMEOUT" > "$AD_CRYPT_CONFIG"
  local c
  for c in "$AD_PLAIN_CONFIG" "$AD_CRYPT_CONFIG"; do
    "$RB_BRIDGE" check-config --config "$c" || fail "check-config rejects $c (status $?)" || return
  done
  sed -n '/^devices:/,$p' "$AD_CRYPT_CONFIG"
  echo "check-config accepts $(basename "$AD_PLAIN_CONFIG") and $(basename "$AD_CRYPT_CONFIG")"
}

# stop the suite's bridge (the link goes down), the example advertisements, start the BTHome advertiser
ad_advertiser() {
  local periph adv n i t
  need_bridge || return
  stop_bridge TERM 20 || return
  "${TOOL[@]}" dbus-wait "$DEV_PATH" org.bluez.Device1 Connected false 15 || return
  periph=$( . "$RB_OUT/job.env" 2>/dev/null; echo "${RB_PERIPHERAL:-hci0}")
  if [ "$periph" != auto ] && [ -f /run/rb-examples/example-advertisement ]; then
    AD_EXAMPLE_ADV=/run/rb-examples/example-advertisement
  else
    AD_EXAMPLE_ADV=/usr/share/doc/bluez-test-scripts/examples/example-advertisement
  fi
  for n in $(rx_pids_of "$AD_EXAMPLE_ADV"); do
    kill -TERM "$n" 2>/dev/null && echo "stopped example-advertisement (pid $n)" && AD_EXAMPLES_STOPPED=1
  done
  for i in $(seq 1 50); do
    n=$("${TOOL[@]}" dbus-get "$RB_PERIPH_ADAPTER" org.bluez.LEAdvertisingManager1 ActiveInstances 2>/dev/null) && [ "$n" = 0 ] && break
    sleep 0.2
  done
  [ "$n" = 0 ] || fail "$RB_PERIPH_ADAPTER still has $n advertisement(s) after stopping the examples" || return
  ad_frame --packet-id 1 --temperature 21.5 --humidity 45.12 --battery 91 > "$AD_HEX" || return
  : > "$AD_LOG"
  "${AD_TOOL[@]}" advertise --adapter "$RB_PERIPH_ADAPTER" --file "$AD_HEX" --type peripheral --instances 2 \
    >> "$AD_LOG" 2>&1 < /dev/null &
  AD_PID=$!
  t=$(ad_advertise "$(cat "$AD_HEX")") || fail "$t" || return
  n=$("${TOOL[@]}" dbus-get "$RB_PERIPH_ADAPTER" org.bluez.LEAdvertisingManager1 ActiveInstances)
  echo "$RB_PERIPH_ADAPTER ($RB_PERIPH_ADDR) advertises BTHome service data fcd2 $(cat "$AD_HEX") ($n instances, pid $AD_PID)"
}

# the bridge with the advertisement device: the first packet, decoded
ad_plain_published() {
  [ -n "$AD_PID" ] || fail "not run: no BTHome advertiser (ad_advertiser)" || return
  rx_start_bridge "$AD_PLAIN_CONFIG" || return
  AD_T0=$RX_START_T0
  # what BlueZ holds: ManufacturerData of the examples' advertisement stays (a report without
  # manufacturer data does not touch it), ServiceData is the last report's (DuplicateData)
  echo "BlueZ $DEV_PATH ServiceData $("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 ServiceData)" \
    "ManufacturerData $("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 ManufacturerData 2>&1 | tail -n 1)"
  ad_py packet "$MQTT_LOG" "$AD_TOPIC" "$AD_T0" 1 30 '{"battery": 91, "temperature": 21.5, "humidity": 45.12}' "$(cat "$AD_HEX")" \
    'the bridge started (advertised before)'
}

ad_available() {
  rx_py time-of "$MQTT_LOG" "$AD_AVAIL" "${AD_T0:-0}" online 10 > /dev/null || fail "no '$AD_AVAIL online' since the bridge started" || return
  expect_retained "$AD_AVAIL" online
}

# a new packet id is published once; the reports of the same packet every 2 s are not
ad_new_packet_once() {
  local t hex ids reports
  need_bridge || return
  hex=$(ad_frame --packet-id 2 --temperature 22.25 --humidity 50.5 --battery 90) || return
  t=$(ad_advertise "$hex") || fail "$t" || return
  ad_py packet "$MQTT_LOG" "$AD_TOPIC" "$t" 2 20 '{"battery": 90, "temperature": 22.25, "humidity": 50.5}' "$hex" || return
  sleep 7    # 3 more reports of packet 2
  ids=$(ad_py packets "$MQTT_LOG" "$AD_TOPIC" "$AD_T0")
  reports=$(ad_py reports "$SUITE/dbus-monitor.txt" "$AD_T0" "$(rx_now)" "$DEV_PATH")
  [ "$ids" = "1 2" ] || fail "packet ids published since the bridge started: '$ids', expected '1 2' (BlueZ signalled ServiceData $reports times)" || return
  echo "packet ids published: $ids; BlueZ signalled the device's ServiceData $reports times meanwhile"
}

ad_discovery_filter() { ad_py filter "$SUITE/dbus-monitor.txt" "${AD_T0:-0}"; }

# bluetoothd never connected the device for the bridge
ad_never_connected() {
  local got
  [ -n "$AD_T0" ] || fail "not run: the advertisement bridge did not start" || return
  "${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Connected | grep -qx false \
    || fail "BlueZ: $DEV_PATH Connected is $("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Connected)" || return
  ad_py never-connected "$SUITE/dbus-monitor.txt" "$AD_T0" "$DEV_PATH" "$RB_PERIPH_ADDR" || return
  need_bridge || return
  got=$(retained "$BASE/bridge/devices")
  json_expect "${got#* }" '[d for d in v if d.get("name") == "'"$AD_NAME"'" and d.get("connection") == "advertisement" and d.get("connected") is False]' \
    "bridge/devices entry of $AD_NAME (connection advertisement, connected false)" || return
  echo "never connected: BlueZ Connected=false, no connecting D-Bus call since the bridge started, bridge/devices: $(echo "${got#* }" | "$PY" -c 'import json,sys; print(json.dumps([d for d in json.load(sys.stdin) if d.get("name") == "'"$AD_NAME"'"]))')"
}

# encrypted BTHome with the device's bindkey
AD_MAC_ARGS=()
ad_encrypted_published() {
  local t hex r3 r4
  [ -n "$AD_PID" ] || fail "not run: no BTHome advertiser" || return
  need_bridge || return
  stop_bridge TERM 20 || return
  AD_MAC_ARGS=(--key "$AD_KEY" --mac "$RB_PERIPH_ADDR")
  hex=$(ad_frame --packet-id 3 --temperature -5.25 --humidity 80 "${AD_MAC_ARGS[@]}" --counter 1) || return
  t=$(ad_advertise "$hex") || fail "$t" || return
  rx_start_bridge "$AD_CRYPT_CONFIG" || return
  AD_T1=$RX_START_T0
  r3=$(ad_py packet "$MQTT_LOG" "$AD_TOPIC" "$AD_T1" 3 30 '{"temperature": -5.25, "humidity": 80}' "$hex" \
    'the bridge started (advertised before)') || fail "$r3" || return
  echo "$r3"
  hex=$(ad_frame --packet-id 4 --temperature -4.5 --humidity 79.5 --battery 88 "${AD_MAC_ARGS[@]}" --counter 2) || return
  t=$(ad_advertise "$hex") || fail "$t" || return
  r4=$(ad_py packet "$MQTT_LOG" "$AD_TOPIC" "$t" 4 20 '{"battery": 88, "temperature": -4.5, "humidity": 79.5}' "$hex") \
    || fail "$r4" || return
  echo "$r4"
  echo "encrypted (bindkey): ${r3##*$'\n'}; ${r4##*$'\n'}"
}

# a wrong key, a plaintext frame and a counter that did not increase are dropped; the next good frame is not
ad_encrypted_rejected() {
  local hex t t0 ids line0 drops
  [ -n "${AD_T1:-}" ] || fail "not run: the bindkey bridge did not start" || return
  need_bridge || return
  t0=$(rx_now)
  line0=$(wc -l < "$BRIDGE_LOG")
  hex=$(ad_frame --packet-id 5 --temperature 30 --key 00112233445566778899aabbccddeeff --mac "$RB_PERIPH_ADDR" --counter 3) || return
  t=$(ad_advertise "$hex") || fail "$t" || return
  sleep 5
  hex=$(ad_frame --packet-id 6 --temperature 31) || return
  t=$(ad_advertise "$hex") || fail "$t" || return
  sleep 5
  hex=$(ad_frame --packet-id 7 --temperature 32 "${AD_MAC_ARGS[@]}" --counter 2) || return
  t=$(ad_advertise "$hex") || fail "$t" || return
  sleep 5
  hex=$(ad_frame --packet-id 8 --temperature 33 --humidity 40 "${AD_MAC_ARGS[@]}" --counter 5) || return
  t=$(ad_advertise "$hex") || fail "$t" || return
  ad_py packet "$MQTT_LOG" "$AD_TOPIC" "$t" 8 20 '{"temperature": 33.0, "humidity": 40}' "$hex" || return
  ids=$(ad_py packets "$MQTT_LOG" "$AD_TOPIC" "$t0")
  # drop lines by reason (debug log); repeats of an accepted encrypted frame count as "did not increase"
  drops=$(tail -n +"$((line0 + 1))" "$BRIDGE_LOG" > "$SUITE/adv-rejected.log"
    echo "$(grep -c 'MIC does not verify' "$SUITE/adv-rejected.log") wrong MIC," \
      "$(grep -c 'plaintext frame from a device with a bindkey' "$SUITE/adv-rejected.log") plaintext," \
      "$(grep -c 'counter that did not increase' "$SUITE/adv-rejected.log") counter not increasing")
  [ "$ids" = 8 ] || fail "packet ids published after the wrong key (5), plaintext (6) and replayed counter (7) frames: '$ids', expected only 8" || return
  echo "wrong key (packet 5), plaintext (6), counter 2 again (7): none published (bridge log: $drops); counter 5 (8) published"
}

# nothing advertised for advertisement.timeout: offline
ad_offline_after_timeout() {
  local t0 t
  [ -n "${AD_T1:-}" ] || fail "not run: the bindkey bridge did not start" || return
  [ -n "$AD_PID" ] || fail "not run: no advertiser" || return
  need_bridge || return
  kill -TERM "$AD_PID" 2>/dev/null
  t0=$(rx_now)
  for _ in $(seq 1 50); do [ -d "/proc/$AD_PID" ] || break; sleep 0.1; done
  wait "$AD_PID" 2>/dev/null
  AD_PID=
  tail -n 2 "$AD_LOG"
  t=$(rx_time_of "$AD_AVAIL" "$t0" offline $((AD_TIMEOUT + 20))) \
    || fail "$AD_AVAIL not offline within $((AD_TIMEOUT + 20))s of the last advertisement (timeout ${AD_TIMEOUT}s): $t" || return
  expect_retained "$AD_AVAIL" offline || return
  echo "advertiser stopped: $AD_AVAIL offline (retained) $(rx_diff "$t" "$t0")s later (advertisement.timeout ${AD_TIMEOUT}s)"
}

# the example advertisements and the suite's bridge again, whatever happened above
ad_restore() {
  local n i off
  bridge_alive && { stop_bridge TERM 20 || return; }
  if [ -n "$AD_PID" ]; then
    kill -TERM "$AD_PID" 2>/dev/null; wait "$AD_PID" 2>/dev/null; AD_PID=
  fi
  if [ -n "$AD_EXAMPLES_STOPPED" ]; then
    off=$(rx_file_size "$RB_OUT/logs/advertisement.log")
    "$PY" -u "$AD_EXAMPLE_ADV" >> "$RB_OUT/logs/advertisement.log" 2>&1 < /dev/null &
    sleep 1
    "$PY" -u "$AD_EXAMPLE_ADV" >> "$RB_OUT/logs/advertisement2.log" 2>&1 < /dev/null &
    rx_py gatt-log "$RB_OUT/logs/advertisement.log" "$off" '^Advertisement registered' 30 || return
    AD_EXAMPLES_STOPPED=
  fi
  for i in $(seq 1 50); do
    n=$("${TOOL[@]}" dbus-get "$RB_PERIPH_ADAPTER" org.bluez.LEAdvertisingManager1 ActiveInstances 2>/dev/null) && [ "$n" -ge 2 ] && break
    sleep 0.2
  done
  echo "$RB_PERIPH_ADAPTER: $n example advertisement(s) again"
  rx_start_bridge "$BRIDGE_CONFIG" || return
  rx_wait_online 60 || return
  echo "the suite's bridge again, $BASE/$DEV/availability online $(since "${RX_START_T0/./}")s after the start"
}

check adv_configs ad_configs
check adv_advertiser ad_advertiser
check adv_plain_published ad_plain_published
check adv_availability_online ad_available
check adv_new_packet_once ad_new_packet_once
check adv_discovery_filter ad_discovery_filter
check adv_never_connected ad_never_connected
check adv_encrypted_published ad_encrypted_published
check adv_encrypted_rejected ad_encrypted_rejected
check adv_offline_after_timeout ad_offline_after_timeout
check adv_never_connected_bindkey ad_never_connected
check adv_restore ad_restore
