# shellcheck shell=bash
# SPEC §11, issue 18: Just Works pairing and bonding on the real bluetoothd.
# The VM's one bluetoothd serves both sides: when the central (the bridge's adapter) pairs, the
# peripheral side of the same daemon asks the DEFAULT agent (RequestAuthorization for the central
# as hci0 sees it), which is the bridge's, and the bridge rightly rejects a device it does not
# know. periph-agent.py stands for the peripheral device's own pairing UI: it becomes the default
# agent after the bridge registered its own (it follows the bridge's log) and accepts requests
# for devices of the peripheral's adapter only; the bridge's Pair keeps the bridge's agent.
#   1. the suite's bridge stops; periph-agent.py starts; a bridge with the suite's config but
#      `pairing: just_works` for the peripheral and a fresh state file starts;
#   2. (a) the encrypted ...def3 is read after Just Works pairing (5.66 pairs by itself when the read is
#      refused; README): its value on MQTT and in the
#      example server's log, "paired and bonded" in the bridge's log, bridge/devices paired and
#      bonded, Device1.Paired (and Trusted) on the central side, the peripheral side's request
#      answered by periph-agent.py, not by the bridge's agent;
#   3. (b) bridge/request/reconnect: the link goes down and up, def3 is read again, and no Pair
#      call (D-Bus) nor pairing (bridge log, periph-agent.py) happens on the new connection;
#   4. (c) bridge/request/unpair: ok on bridge/response/unpair, RemoveDevice on D-Bus, the
#      central no longer has the bond (its object gone or Paired false);
#   5. always: the pairing bridge and periph-agent.py stopped, every bond of the two sides
#      removed, the suite's bridge again with the suite's config, online (for 60-90).
# 50-recovery's unreadable_remembered (no peripheral agent: pairing fails) runs before this.

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

PR_AVAIL=$BASE/$DEV/availability
PR_ENC_CHR=12345678-1234-5678-1234-56789abcdef3
PR_ENC_TOPIC=$BASE/$DEV/$RX_TEST_SVC/$PR_ENC_CHR
PR_CONFIG=$SUITE/bridge-pairing.yaml
PR_STATE_DIR=$SUITE/state-pairing
PR_AGENT_LOG=$SUITE/periph-agent.log
# the central adapter as the peripheral's adapter sees it
PR_PEER_PATH=${RB_PERIPH_ADAPTER:-/org/bluez/hci0}/dev_$(printf '%s' "${RB_CENTRAL_ADDR:-}" | tr : _)
PR_AGENT_PID= PR_STOPPED_SUITE= PR_CONFIG_OK= PR_NOT_READY="pairing_config did not run"
PR_T_START= PR_START_LINE= PR_GATT_OFF= PR_PAIRED=

# pr_bluez_bonds: the Paired/Bonded/Trusted of both sides' objects, one line
pr_bluez_bonds() {
  "$PY" - "$DEV_PATH" "$PR_PEER_PATH" <<'EOF'
import sys, dbus
bus = dbus.SystemBus()
out = []
for p in sys.argv[1:]:
    try:
        props = dbus.Interface(bus.get_object('org.bluez', p), 'org.freedesktop.DBus.Properties').GetAll('org.bluez.Device1')
    except dbus.DBusException:
        out.append('%s absent' % p); continue
    out.append('%s %s' % (p, ' '.join('%s=%s' % (k, bool(props[k]) if k in props else '-') for k in ('Paired', 'Bonded', 'Trusted', 'Connected'))))
print('; '.join(out))
EOF
}

# pr_remove_bonds: Adapter1.RemoveDevice of each side's object that is paired or bonded
pr_remove_bonds() {
  "$PY" - "$DEV_PATH" "$PR_PEER_PATH" <<'EOF'
import sys, dbus
bus = dbus.SystemBus()
for p in sys.argv[1:]:
    try:
        props = dbus.Interface(bus.get_object('org.bluez', p), 'org.freedesktop.DBus.Properties').GetAll('org.bluez.Device1')
    except dbus.DBusException:
        continue
    if props.get('Paired') or props.get('Bonded'):
        adapter = p.rsplit('/', 1)[0]
        dbus.Interface(bus.get_object('org.bluez', adapter), 'org.bluez.Adapter1').RemoveDevice(p)
        print('removed the bond of %s (RemoveDevice)' % p)
EOF
}

# pr_dbus_calls MEMBER T0 TEXT: the method calls MEMBER sent to org.bluez since T0 (unix time) whose
# header or arguments contain TEXT, one line each (time, sender), from the suite's dbus-monitor
pr_dbus_calls() {
  "$PY" - "$SUITE/dbus-monitor.txt" "$@" <<'EOF'
import re, sys
path, member, t0, text = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
head = re.compile(r'^method call time=([\d.]+) sender=(\S+) -> destination=(\S+) .*member=(\S+)')
blocks, cur = [], None
with open(path, errors='replace') as f:
    for line in f:
        if re.match(r'^(signal|method call|method return|error) ', line):
            cur = [line.rstrip('\n')]; blocks.append(cur)
        elif cur is not None:
            cur.append(line.strip())
for b in blocks:
    m = head.match(b[0])
    if m and m.group(4) == member and float(m.group(1)) >= t0 and any(text in l for l in b):
        print('%s %s %s' % (m.group(1), member, ' '.join(l for l in b if text in l)[:200]))
EOF
}

# the config: the suite's with `pairing: just_works` for the peripheral and a fresh state file
pr_config() {
  need_bridge || return
  rm -rf "$PR_STATE_DIR"; mkdir -p "$PR_STATE_DIR"
  sed -E -e "s#^(\s*)- match: \{ address: \"$RB_PERIPH_ADDR\" \}#&\n\1  pairing: just_works#" \
         -e "s#^state_file:.*#state_file: $PR_STATE_DIR/peripherals.json#" \
         "$BRIDGE_CONFIG" > "$PR_CONFIG"
  grep -q '^    pairing: just_works' "$PR_CONFIG" \
    || fail "$PR_CONFIG has no 'pairing: just_works' under the peripheral's devices entry" || return
  cat "$PR_CONFIG"
  "$RB_BRIDGE" check-config --config "$PR_CONFIG" || fail "check-config rejects $PR_CONFIG (status $?)" || return
  PR_NOT_READY="the pairing bridge did not start (pairing_bridge_start)" PR_CONFIG_OK=1
  echo "pairing: just_works for $RB_PERIPH_ADDR, state file $PR_STATE_DIR/peripherals.json; check-config accepts $PR_CONFIG"
}

# stop the suite's bridge, remove any bond, start periph-agent.py, then the pairing bridge
pr_bridge_start() {
  local i out
  [ -n "$PR_CONFIG_OK" ] || fail "not run: $PR_NOT_READY" || return
  stop_bridge TERM 20 || return
  PR_STOPPED_SUITE=1
  if [ "$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Connected 2>/dev/null)" = true ]; then
    echo "NOTE: $DEV_PATH still connected after the suite's bridge exited; Device1.Disconnect"
    "$PY" -c 'import dbus, sys; dbus.Interface(dbus.SystemBus().get_object("org.bluez", sys.argv[1]), "org.bluez.Device1").Disconnect()' "$DEV_PATH"
    "${TOOL[@]}" dbus-wait "$DEV_PATH" org.bluez.Device1 Connected false 15 || return
  fi
  echo "before: $(pr_bluez_bonds)"
  out=$(pr_remove_bonds 2>&1) || fail "removing old bonds: $out" || return
  [ -z "$out" ] || echo "$out"
  : > "$PR_AGENT_LOG"
  "$PY" -u "$RB_TESTS/periph-agent.py" --adapter "$RB_PERIPH_ADAPTER" --log "$PR_AGENT_LOG" \
    --follow "$BRIDGE_LOG" --pattern 'pairing agent registered' > "$SUITE/periph-agent.out" 2>&1 < /dev/null &
  PR_AGENT_PID=$!
  for i in $(seq 1 150); do
    grep -q ' default agent (registered' "$PR_AGENT_LOG" && break
    kill -0 "$PR_AGENT_PID" 2>/dev/null || break
    sleep 0.2
  done
  grep ' default agent (registered' "$PR_AGENT_LOG" \
    || fail "periph-agent.py did not register within 30 s: $(tail -n 2 "$PR_AGENT_LOG" "$SUITE/periph-agent.out" 2>&1 | tr '\n' ' ')" || return
  PR_GATT_OFF=$(rx_file_size "$RX_GATT_LOG")
  rx_start_bridge "$PR_CONFIG" || return
  PR_T_START=$RX_START_T0 PR_START_LINE=$RX_START_LINE
  # the bridge registered its agent (and made it the default); periph-agent.py took the default back
  for i in $(seq 1 100); do
    grep -q ' default agent again' "$PR_AGENT_LOG" && break
    sleep 0.2
  done
  tail -n +"$((PR_START_LINE + 1))" "$BRIDGE_LOG" | grep -m1 'pairing agent registered' \
    || fail "the bridge's log has no 'pairing agent registered' within 20 s of its start" || return
  grep -m1 ' default agent again' "$PR_AGENT_LOG" \
    || fail "periph-agent.py did not take the default agent back after the bridge registered its own" || return
  PR_NOT_READY=
  echo "periph-agent.py (pid $PR_AGENT_PID) is the default agent again after the bridge's registration"
}

pr_need() { [ -z "$PR_NOT_READY" ] || fail "not run: $PR_NOT_READY" || return; need_bridge; }

# (a) def3 published and read by the example server
pr_encrypted_read() {
  local m
  pr_need || return
  m=$(rx_wait_after "$PR_ENC_TOPIC" "$PR_T_START" 1 90) \
    || fail "$m; bridge log: $(tail -n +"$((PR_START_LINE + 1))" "$BRIDGE_LOG" | grep -E 'pair|def3' | tail -n 3 | tr '\n' ' ')" || return
  echo "$m"
  rx_gatt_log "$PR_GATT_OFF" '^TestEncryptCharacteristic Read' 5 || return
  echo "def3 (encrypt-read) read after pairing: $(last_payload "$PR_ENC_TOPIC") on $PR_ENC_TOPIC; the example server logged the read"
}

# (a) the bridge's log: the device paired and bonded, no pairing failure. On 5.66 bluetoothd pairs by itself
# (Just Works) when the read of def3 is refused for lack of encryption, before the bridge could call Pair: the
# bridge logs the bond it sees ("paired and bonded in BlueZ (without the bridge's Pair ...)") and trusts it;
# after its own Pair it logs "paired and bonded". def5 (secure-read: an authenticated key) stays refused.
pr_paired_log() {
  local lines
  pr_need || return
  lines=$(tail -n +"$((PR_START_LINE + 1))" "$BRIDGE_LOG" | grep -E 'pairing|paired|pairing agent|bonded')
  echo "$lines" | cut -c1-300
  echo "$lines" | grep -q 'paired and bonded' || fail "the bridge's log has no 'paired and bonded'" || return
  ! echo "$lines" | grep -q 'pairing failed' || fail "the bridge's log says: $(echo "$lines" | grep -m1 'pairing failed' | cut -c1-200)" || return
  PR_PAIRED=1
  echo "bridge log: $(echo "$lines" | grep -m1 'paired and bonded' | sed 's/^.*\] //' | cut -c1-200)"
}

# (a) bridge/devices: paired and bonded
pr_devices_bonded() {
  local i got
  pr_need || return
  for i in $(seq 1 15); do
    got=$(retained "$BASE/bridge/devices" 2)
    json_expect "${got#* }" '[d for d in v if d["name"] == "'"$DEV"'" and d.get("paired") is True and d.get("bonded") is True]' > /dev/null 2>&1 && break
    sleep 1
  done
  json_expect "${got#* }" '[d for d in v if d["name"] == "'"$DEV"'" and d.get("paired") is True and d.get("bonded") is True]' \
    "bridge/devices: $DEV paired and bonded" || fail "bridge/devices (retained) after 15 s: ${got#* }" || return
}

# (a) BlueZ: the central's object of the peripheral is paired (and bonded, trusted)
pr_bluez_paired() {
  local p b t
  pr_need || return
  p=$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Paired) || fail "$p" || return
  b=$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Bonded 2>/dev/null) || b="(no Bonded property)"
  t=$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Trusted) || fail "$t" || return
  echo "both sides: $(pr_bluez_bonds)"
  [ "$p" = true ] || fail "$DEV_PATH Paired=$p" || return
  [ "$t" = true ] || fail "$DEV_PATH Trusted=$t (the bridge sets Trusted after pairing)" || return
  [ "$b" != false ] || fail "$DEV_PATH Paired=true but Bonded=false (no keys stored)" || return
  echo "BlueZ: $DEV_PATH Paired=$p Bonded=$b Trusted=$t"
}

# (a) the peripheral side's request went to periph-agent.py, for the central, and nothing was rejected
pr_peripheral_side() {
  local acc rej bridge_rej
  pr_need || return
  cat "$PR_AGENT_LOG"
  acc=$(grep -c " $PR_PEER_PATH.* -> accepted" "$PR_AGENT_LOG")
  rej=$(grep -c ' -> rejected' "$PR_AGENT_LOG")
  bridge_rej=$(tail -n +"$((PR_START_LINE + 1))" "$BRIDGE_LOG" | grep 'pairing agent: .*rejected')
  [ -z "$bridge_rej" ] || echo "$bridge_rej" | cut -c1-300
  [ "$acc" -ge 1 ] || fail "periph-agent.py accepted no request for $PR_PEER_PATH (the central as the peripheral sees it)" || return
  [ "$rej" = 0 ] || fail "periph-agent.py rejected $rej request(s): $(grep -m1 ' -> rejected' "$PR_AGENT_LOG" | cut -c1-200)" || return
  [ -z "$bridge_rej" ] || fail "the bridge's agent rejected a request: $(echo "$bridge_rej" | head -n 1 | cut -c1-200)" || return
  echo "the peripheral side asked periph-agent.py ($acc request(s) for $PR_PEER_PATH, accepted); the bridge's agent rejected nothing"
}

# (b) the bond survives a reconnect: def3 read again, no Pair call, no pairing request
pr_bond_reconnect() {
  local t0 r t_off t_on pairs line agent_lines
  pr_need || return
  [ -n "$PR_PAIRED" ] || fail "not run: the device did not pair (pairing_bridge_log)" || return
  rx_wait_online 30 || return
  line=$(wc -l < "$BRIDGE_LOG")
  agent_lines=$(wc -l < "$PR_AGENT_LOG")
  t0=$(rx_now)
  r=$(mqtt_request "$BASE/bridge/request/reconnect" "{\"device\":\"$DEV\",\"transaction\":\"rb-55-r\"}" "$BASE/bridge/response/reconnect") || return
  json_expect "$r" 'v["status"] == "ok"' "reconnect response" || return
  t_off=$(rx_time_of "$PR_AVAIL" "$t0" offline 20) || fail "$t_off" || return
  t_on=$(rx_time_of "$PR_AVAIL" "$t_off" online 60) || fail "offline +$(rx_diff "$t_off" "$t0")s, then $t_on; $(device_state)" || return
  rx_wait_after "$PR_ENC_TOPIC" "$t_off" 1 30 || return
  pairs=$(pr_dbus_calls Pair "$t0" "$DEV_PATH")
  [ -z "$pairs" ] || fail "Device1.Pair called again after the reconnect: $(echo "$pairs" | head -n 2 | tr '\n' ' ')" || return
  ! tail -n +"$((line + 1))" "$BRIDGE_LOG" | grep -E 'pairing \(|paired and bonded|pairing failed' \
    || fail "the bridge paired again after the reconnect (its log, above)" || return
  [ "$(tail -n +"$((agent_lines + 1))" "$PR_AGENT_LOG" | grep -c 'Request')" = 0 ] \
    || fail "periph-agent.py was asked again after the reconnect: $(tail -n +"$((agent_lines + 1))" "$PR_AGENT_LOG" | grep -m1 Request)" || return
  [ "$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Paired)" = true ] || fail "$DEV_PATH no longer paired: $(pr_bluez_bonds)" || return
  echo "reconnect: offline +$(rx_diff "$t_off" "$t0")s, online +$(rx_diff "$t_on" "$t0")s, def3 read again; no Pair call (D-Bus), no pairing in the bridge's log, no agent request"
}

# (c) unpair: ok, RemoveDevice, the central has no bond
pr_unpair() {
  local t0 r i p rm
  pr_need || return
  t0=$(rx_now)
  r=$(mqtt_request "$BASE/bridge/request/unpair" "{\"device\":\"$DEV\",\"transaction\":\"rb-55-u\"}" "$BASE/bridge/response/unpair") || return
  echo "bridge/response/unpair: $r"
  json_expect "$r" 'v["status"] == "ok" and v.get("transaction") == "rb-55-u"' "unpair response" || return
  for i in $(seq 1 50); do
    p=$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Paired 2>/dev/null) || p=absent
    [ "$p" != true ] && break
    sleep 0.2
  done
  echo "+$(rx_diff "$(rx_now)" "$t0")s: $DEV_PATH Paired: $p; both sides: $(pr_bluez_bonds)"
  [ "$p" != true ] || fail "$DEV_PATH still paired 10 s after the unpair" || return
  for i in $(seq 1 25); do
    rm=$(pr_dbus_calls RemoveDevice "$t0" "$DEV_PATH")
    [ -n "$rm" ] && break
    sleep 0.2
  done
  [ -n "$rm" ] || fail "no Adapter1.RemoveDevice of $DEV_PATH on D-Bus after the unpair" || return
  echo "$rm"
  echo "unpair: ok on bridge/response/unpair, RemoveDevice on D-Bus, $DEV_PATH $([ "$p" = absent ] && echo gone || echo "Paired=$p")"
}

# always: stop the pairing bridge and periph-agent.py, remove every bond, the suite's bridge again
pr_restore() {
  local i out bonds
  if [ -z "$PR_STOPPED_SUITE" ]; then
    [ -n "$PR_AGENT_PID" ] && { kill -TERM "$PR_AGENT_PID" 2>/dev/null; wait "$PR_AGENT_PID" 2>/dev/null; PR_AGENT_PID=; }
    need_bridge || return
    echo "the suite's bridge was not stopped here (pid $BRIDGE_PID): nothing to restore"
    return 0
  fi
  bridge_alive && { stop_bridge TERM 20 || echo "NOTE: stopping the pairing bridge failed (above)"; }
  # what followed the unpair (diagnostics for the README)
  { echo "== bridge log (pairing lines) since the pairing bridge started"
    tail -n +"$((${PR_START_LINE:-0} + 1))" "$BRIDGE_LOG" | grep -E 'pair|bond|agent'
    echo "== periph-agent.log"; cat "$PR_AGENT_LOG"; } > "$SUITE/pairing-diag.txt" 2>&1
  if [ -n "$PR_AGENT_PID" ]; then
    kill -TERM "$PR_AGENT_PID" 2>/dev/null
    for i in $(seq 1 50); do kill -0 "$PR_AGENT_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$PR_AGENT_PID" 2>/dev/null && { echo "NOTE: periph-agent.py still running 5 s after SIGTERM: SIGKILL"; kill -KILL "$PR_AGENT_PID"; }
    wait "$PR_AGENT_PID" 2>/dev/null
    PR_AGENT_PID=
    tail -n 1 "$PR_AGENT_LOG"
  fi
  [ -z "$(rx_pids_of "$RB_TESTS/periph-agent.py")" ] || fail "periph-agent.py still running: $(rx_pids_of "$RB_TESTS/periph-agent.py")" || return
  echo "before the clean-up: $(pr_bluez_bonds)"
  out=$(pr_remove_bonds 2>&1) || fail "removing the bonds: $out" || return
  [ -z "$out" ] || echo "$out"
  bonds=$(pr_bluez_bonds)
  echo "after: $bonds"
  ! echo "$bonds" | grep -q -E 'Paired=True|Bonded=True' || fail "a bond is left: $bonds" || return
  if [ "$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Connected 2>/dev/null)" = true ]; then
    "$PY" -c 'import dbus, sys; dbus.Interface(dbus.SystemBus().get_object("org.bluez", sys.argv[1]), "org.bluez.Device1").Disconnect()' "$DEV_PATH"
    "${TOOL[@]}" dbus-wait "$DEV_PATH" org.bluez.Device1 Connected false 15 || return
  fi
  rx_start_bridge "$BRIDGE_CONFIG" || return
  rx_wait_online 60 || return
  echo "no peripheral agent, no bond left; the suite's bridge again, $PR_AVAIL online $(since "${RX_START_T0/./}")s after the start"
}

check pairing_config pr_config
check pairing_bridge_start pr_bridge_start
check pairing_encrypted_read pr_encrypted_read
check pairing_bridge_log pr_paired_log
check pairing_devices_bonded pr_devices_bonded
check pairing_bluez_paired pr_bluez_paired
check pairing_peripheral_side pr_peripheral_side
check pairing_bond_reconnect pr_bond_reconnect
check pairing_unpair pr_unpair
check pairing_restore pr_restore
