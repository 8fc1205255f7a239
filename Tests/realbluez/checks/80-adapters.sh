# shellcheck shell=bash
# SPEC §10, issue 17: several adapters in one bridge, on the real stack. Needs a VM with a third
# btvirt controller (run-vm.sh --controllers 3, scripts/test-realbluez boots it so): the spare
# central is the first of $RB_OTHER_ADAPTERS. Without one every check here FAILS and says so.
#   1. the suite's bridge stops; a bridge with the suite's config but
#      `adapters: [<central>, <spare>]` (and a state file of its own, so it finds the peripheral
#      by scanning on both) connects the peripheral through one of them: availability online,
#      heart rate values. btvirt's RSSI is 127 (not available) on both, so which adapter it
#      takes is not defined: bridge/devices and Device1.Connected on each adapter's object of
#      the peripheral say which, and must agree;
#   2. that adapter powered off over D-Bus (Adapter1.Powered = false): availability offline,
#      then online, values again, bridge/devices and health_check name the other adapter, the
#      object on the powered-off adapter is not connected, the bridge leaves it off;
#   3. powered on again: the bridge takes it back in use (its log) and the link stays where it is;
#   4. from before that bridge starts, never two links at once: Device1.Connected of the
#      peripheral's object on both central adapters, and of the peripheral adapter's objects of
#      both centrals, sampled every 0.1 s plus every Connected signal (links.py,
#      suite/adapters-links.txt);
#   5. the suite's bridge again with the suite's config (always), online, for 90-shutdown.

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

MA_AVAIL=$BASE/$DEV/availability
MA_HR=$BASE/$DEV/180d/2a37
MA_CONFIG=$SUITE/bridge-adapters.yaml
MA_LINKS=$SUITE/adapters-links.txt
MA_LINKS_TOOL=("$PY" "$RB_TESTS/links.py")
MA_PERIPH_SEG=$(printf '%s' "${RB_PERIPH_ADDR:-}" | tr : _)
MA_NAMES=()            # the two adapters in use: central, spare (hciN)
MA_NOT_READY="adapters_config did not run"
MA_FIRST= MA_SECOND=   # the adapter holding the link before the power-off, the other one
MA_T_START= MA_T_OFF= MA_T_ON= MA_T_POWER_ON= MA_LOG_LINE=
MA_SAMPLER_PID= MA_STOPPED_SUITE= MA_POWERED_OFF=

ma_name() { basename "$1"; }                                     # /org/bluez/hci1 -> hci1
ma_dev() { echo "/org/bluez/$1/dev_$MA_PERIPH_SEG"; }           # the peripheral's object on adapter hciN
# ma_connected hciN: Device1.Connected of the peripheral's object on hciN: true, false, or absent (no object)
ma_connected() { local v; v=$("${TOOL[@]}" dbus-get "$(ma_dev "$1")" org.bluez.Device1 Connected 2>/dev/null) && echo "$v" || echo absent; }
# ma_need: fail (with why) unless the adapters bridge is set up
ma_need() { [ -z "$MA_NOT_READY" ] || fail "not run: $MA_NOT_READY"; }

# ma_set_powered PATH true|false: Adapter1.Powered over D-Bus (what a user's `bluetoothctl power off`
# does); prints the unix time of the call, then how long it took (python's start under TCG takes
# seconds: the call's own time is what counts)
ma_set_powered() {
  "$PY" - "$1" "$2" <<'EOF'
import sys, time, dbus
p = dbus.Interface(dbus.SystemBus().get_object('org.bluez', sys.argv[1]), 'org.freedesktop.DBus.Properties')
t = time.time()
p.Set('org.bluez.Adapter1', 'Powered', dbus.Boolean(sys.argv[2] == 'true'))
print('%.6f' % t)
print('Set(Adapter1.Powered = %s) on %s returned after %.3fs' % (sys.argv[2], sys.argv[1], time.time() - t))
EOF
}

# ma_devices_entry: the peripheral's entry of the retained bridge/devices, as JSON (status 1 if none)
ma_devices_entry() {
  local got
  got=$(retained "$BASE/bridge/devices")
  [ -n "$got" ] || { echo "no retained $BASE/bridge/devices"; return 1; }
  echo "${got#* }" | "$PY" -c '
import json, sys
addr = sys.argv[1].upper()
try:
    arr = json.load(sys.stdin)
except ValueError as e:
    print("bridge/devices is not JSON: %s" % e); sys.exit(1)
mine = [d for d in arr if isinstance(d, dict) and str(d.get("address", "")).upper() == addr]
if not mine:
    print("bridge/devices has no %s" % addr); sys.exit(1)
print(json.dumps(mine[0], sort_keys=True))' "$RB_PERIPH_ADDR"
}

# ma_wait_devices ADAPTER|any SECONDS: bridge/devices names ADAPTER (any: one of the two) for the
# peripheral, connected; prints its entry
ma_wait_devices() {
  local e i want
  if [ "$1" = any ]; then want='v.get("adapter") in ("'"${MA_NAMES[0]}"'", "'"${MA_NAMES[1]}"'")'; else want='v.get("adapter") == "'"$1"'"'; fi
  for i in $(seq 1 "$2"); do
    e=$(ma_devices_entry) && json_expect "$e" "$want"' and v.get("connected") is True' > /dev/null 2>&1 \
      && { echo "$e"; return 0; }
    sleep 1
  done
  fail "bridge/devices does not name $1 (connected) for $RB_PERIPH_ADDR after $2 s: $e"
}

# ma_health: the bridge's health_check answer
ma_health() {
  mqtt_request "$BASE/bridge/request/health_check" '{"transaction":"rb-80"}' "$BASE/bridge/response/health_check" 15
}

# the spare central, the config with both adapters
ma_config() {
  local other other_addr
  MA_NOT_READY="adapters_config failed"
  need_bridge || return
  [ -n "${RB_OTHER_ADAPTERS:-}" ] \
    || fail "RB_OTHER_ADAPTERS is empty: the VM has no spare central controller; boot it with 3 controllers (scripts/test-realbluez does: run-vm.sh --controllers 3)" || return
  other=${RB_OTHER_ADAPTERS%% *}
  "${TOOL[@]}" dbus-wait "$other" org.bluez.Adapter1 Powered true 10 || return
  other_addr=$("${TOOL[@]}" dbus-get "$other" org.bluez.Adapter1 Address) || fail "$other_addr" || return
  other_addr=${other_addr//\"/}
  MA_NAMES=("$(ma_name "$RB_CENTRAL_ADAPTER")" "$(ma_name "$other")")
  mkdir -p "$SUITE/state-adapters"
  sed -E -e "s#^(\s*)adapter:.*#\1adapters: [${MA_NAMES[0]}, ${MA_NAMES[1]}]#" \
         -e "s#^state_file:.*#state_file: $SUITE/state-adapters/peripherals.json#" \
         "$BRIDGE_CONFIG" > "$MA_CONFIG"
  grep -q "^  adapters: \[${MA_NAMES[0]}, ${MA_NAMES[1]}\]" "$MA_CONFIG" \
    || fail "$MA_CONFIG has no 'adapters: [${MA_NAMES[0]}, ${MA_NAMES[1]}]' (the suite's config has no bluetooth.adapter line?)" || return
  cat "$MA_CONFIG"
  "$RB_BRIDGE" check-config --config "$MA_CONFIG" || fail "check-config rejects $MA_CONFIG (status $?)" || return
  MA_NOT_READY="the adapters bridge did not start (adapters_bridge_start)"
  echo "adapters: [${MA_NAMES[0]}, ${MA_NAMES[1]}] (spare central $other, $other_addr; RB_OTHER_ADAPTERS='$RB_OTHER_ADAPTERS'); check-config accepts $MA_CONFIG"
}

# ma_start_sampler: links.py sampling the links of both sides (the peripheral's object on each
# central; each central's object on the peripheral's adapter) until ma_one_link; waits for its
# first sample (python with gi starts slowly under TCG)
ma_start_sampler() {
  local n addr objs=()
  for n in "${MA_NAMES[@]}"; do
    addr=$("${TOOL[@]}" dbus-get "/org/bluez/$n" org.bluez.Adapter1 Address) || fail "$addr" || return
    addr=${addr//\"/}
    objs+=("c-$n=$(ma_dev "$n")" "p-$n=$RB_PERIPH_ADAPTER/dev_${addr//:/_}")
  done
  "${MA_LINKS_TOOL[@]}" sample "$MA_LINKS" "${objs[@]}" > "$SUITE/adapters-links.err" 2>&1 &
  MA_SAMPLER_PID=$!
  for n in $(seq 1 150); do
    grep -q ' sample ' "$MA_LINKS" 2>/dev/null && { echo "link sampler running (pid $MA_SAMPLER_PID): ${objs[*]}"; return 0; }
    kill -0 "$MA_SAMPLER_PID" 2>/dev/null || break
    sleep 0.2
  done
  fail "the link sampler wrote no sample within 30 s: $(head -c 300 "$SUITE/adapters-links.err" 2>&1)"
}

# stop the suite's bridge (its link goes down), start the one with both adapters (the links
# sampled from before it starts)
ma_bridge_start() {
  local n c
  [ ${#MA_NAMES[@]} = 2 ] || fail "not run: $MA_NOT_READY" || return
  stop_bridge TERM 20 || return
  MA_STOPPED_SUITE=1
  for n in "${MA_NAMES[@]}"; do
    c=$(ma_connected "$n")
    if [ "$c" = true ]; then
      echo "NOTE: $(ma_dev "$n") still connected after the suite's bridge exited; Device1.Disconnect"
      "$PY" -c 'import dbus, sys; dbus.Interface(dbus.SystemBus().get_object("org.bluez", sys.argv[1]), "org.bluez.Device1").Disconnect()' "$(ma_dev "$n")"
      "${TOOL[@]}" dbus-wait "$(ma_dev "$n")" org.bluez.Device1 Connected false 15 || return
    fi
  done
  ma_start_sampler || return
  rx_start_bridge "$MA_CONFIG" || return
  MA_T_START=$RX_START_T0
  MA_NOT_READY=
}

# the peripheral online and heart rate values through one of the adapters
ma_online() {
  local t_on
  ma_need || return
  t_on=$(rx_time_of "$MA_AVAIL" "$MA_T_START" online 90) \
    || fail "$t_on; BlueZ: ${MA_NAMES[0]} Connected=$(ma_connected "${MA_NAMES[0]}"), ${MA_NAMES[1]} Connected=$(ma_connected "${MA_NAMES[1]}")" || return
  rx_wait_after "$MA_HR" "$t_on" 3 30 || return
  echo "availability online +$(rx_diff "$t_on" "$MA_T_START")s after the start, 3 heart rate values after it"
}

# which adapter holds the link: bridge/devices and BlueZ agree, exactly one object connected,
# and the link sampler saw it
ma_link_found() {
  local e adapter c0 c1 h
  ma_need || return
  e=$(ma_wait_devices any 20) || fail "$e" || return
  adapter=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["adapter"])' "$e")
  c0=$(ma_connected "${MA_NAMES[0]}") c1=$(ma_connected "${MA_NAMES[1]}")
  echo "bridge/devices: $e; BlueZ: ${MA_NAMES[0]} Connected=$c0, ${MA_NAMES[1]} Connected=$c1"
  if [ "$adapter" = "${MA_NAMES[0]}" ]; then MA_FIRST=${MA_NAMES[0]} MA_SECOND=${MA_NAMES[1]}
  else MA_FIRST=${MA_NAMES[1]} MA_SECOND=${MA_NAMES[0]}; fi
  [ "$(ma_connected "$MA_FIRST")" = true ] || fail "bridge/devices names $MA_FIRST but $(ma_dev "$MA_FIRST") is not connected" || return
  [ "$(ma_connected "$MA_SECOND")" != true ] || fail "both $(ma_dev "$MA_FIRST") and $(ma_dev "$MA_SECOND") are connected" || return
  h=$(ma_health) || fail "$h" || return
  json_expect "$h" 'v["devices"]["'"$DEV"'"]["adapter"] == "'"$MA_FIRST"'" and set(v["slots"]) >= {"'"$MA_FIRST"'", "'"$MA_SECOND"'"} and v["slots"]["'"$MA_FIRST"'"]["in_use"] == 1 and v["slots"]["'"$MA_SECOND"'"]["in_use"] == 0' \
    "health_check: devices.$DEV.adapter $MA_FIRST, slots of both adapters, one in use on $MA_FIRST" || fail "$h" || return
  [ -n "$MA_SAMPLER_PID" ] && grep -q " sample .*c-$MA_FIRST=1" "$MA_LINKS" 2>/dev/null \
    || fail "the link sampler (started with the bridge) has no sample with $MA_FIRST connected: $(tail -n 1 "$MA_LINKS" 2>&1) $(head -c 300 "$SUITE/adapters-links.err" 2>&1)" || return
  echo "the link is on $MA_FIRST (bridge/devices, Device1.Connected, health_check agree; sampled)"
}

# power off the adapter that holds the link
ma_power_off() {
  local out
  ma_need || return
  [ -n "$MA_FIRST" ] || fail "not run: the adapter holding the link is not known (adapters_link_found)" || return
  MA_LOG_LINE=$(wc -l < "$BRIDGE_LOG")
  out=$(ma_set_powered "/org/bluez/$MA_FIRST" false 2>&1) || fail "Adapter1.Powered = false on $MA_FIRST: $out" || return
  MA_POWERED_OFF=1
  MA_T_OFF=$(echo "$out" | head -n 1)
  "${TOOL[@]}" dbus-wait "/org/bluez/$MA_FIRST" org.bluez.Adapter1 Powered false 10 || return
  echo "$out" | tail -n 1
}

ma_offline_online() {
  local t_off
  [ -n "$MA_POWERED_OFF" ] || fail "not run: no adapter was powered off" || return
  need_bridge || return
  t_off=$(rx_time_of "$MA_AVAIL" "$MA_T_OFF" offline 20) || fail "$t_off; $(ma_connected "$MA_FIRST")" || return
  MA_T_ON=$(rx_time_of "$MA_AVAIL" "$t_off" online 90) \
    || fail "offline +$(rx_diff "$t_off" "$MA_T_OFF")s, then $MA_T_ON; ${MA_SECOND} Connected=$(ma_connected "$MA_SECOND"); bridge log: $(tail -n +"$MA_LOG_LINE" "$BRIDGE_LOG" | grep -E 'adapter|through|connect' | tail -n 3 | tr '\n' ' ')" || { MA_T_ON=; return 1; }
  echo "availability offline +$(rx_diff "$t_off" "$MA_T_OFF")s, online +$(rx_diff "$MA_T_ON" "$MA_T_OFF")s after the power-off"
}

ma_values_again() {
  [ -n "$MA_T_ON" ] || fail "not run: the peripheral did not come back online" || return
  rx_wait_after "$MA_HR" "$MA_T_ON" 3 30
}

# bridge/devices and health_check name the other adapter
ma_devices_other() {
  local e h
  [ -n "$MA_T_ON" ] || fail "not run: the peripheral did not come back online" || return
  e=$(ma_wait_devices "$MA_SECOND" 20) || return
  h=$(ma_health) || fail "$h" || return
  json_expect "$h" 'v["devices"]["'"$DEV"'"]["adapter"] == "'"$MA_SECOND"'" and v["devices"]["'"$DEV"'"]["connected"] is True and v["slots"]["'"$MA_SECOND"'"]["in_use"] == 1 and v["slots"].get("'"$MA_FIRST"'", {}).get("in_use", 0) == 0' \
    "health_check: devices.$DEV on $MA_SECOND, its slot in use there" || fail "$h" || return
  echo "bridge/devices: $e; health_check slots: $("$PY" -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["slots"], sort_keys=True))' "$h")"
}

# BlueZ: the object on the powered-off adapter is not connected, the one on the other adapter is
ma_old_link_down() {
  local c_old c_new
  [ -n "$MA_T_ON" ] || fail "not run: the peripheral did not come back online" || return
  c_old=$(ma_connected "$MA_FIRST") c_new=$(ma_connected "$MA_SECOND")
  [ "$c_old" != absent ] || c_old="absent (BlueZ dropped the object at the power-off)"
  [ "$c_old" != true ] || fail "$(ma_dev "$MA_FIRST") (powered-off adapter) is still connected" || return
  [ "$c_new" = true ] || fail "$(ma_dev "$MA_SECOND") is not connected ($c_new)" || return
  echo "$(ma_dev "$MA_FIRST") Connected=$c_old, $(ma_dev "$MA_SECOND") Connected=$c_new"
}

# the bridge left the powered-off adapter off (SPEC §10) and said why
ma_left_off() {
  local p lines
  [ -n "$MA_POWERED_OFF" ] || fail "not run: no adapter was powered off" || return
  p=$("${TOOL[@]}" dbus-get "/org/bluez/$MA_FIRST" org.bluez.Adapter1 Powered) || fail "$p" || return
  [ "$p" = false ] || fail "$MA_FIRST is powered again ($p): the bridge powered it on" || return
  lines=$(tail -n +"$((MA_LOG_LINE + 1))" "$BRIDGE_LOG" | grep -E "adapter $MA_FIRST (powered off|is left off|is down)")
  echo "$lines" | cut -c1-300
  echo "$lines" | grep -q "adapter $MA_FIRST is left off" || fail "$MA_FIRST is off but the bridge's log has no 'adapter $MA_FIRST is left off'" || return
  echo "$MA_FIRST still powered off; the bridge logged that it leaves it off"
}

# powered on again: the bridge uses it again (its log), the link stays on the other adapter
ma_power_on_kept() {
  local out i line t
  [ -n "$MA_POWERED_OFF" ] || fail "not run: no adapter was powered off" || return
  [ -n "$MA_T_ON" ] || fail "not run: the peripheral did not come back online" || return
  line=$(wc -l < "$BRIDGE_LOG")
  out=$(ma_set_powered "/org/bluez/$MA_FIRST" true 2>&1) || fail "Adapter1.Powered = true on $MA_FIRST: $out" || return
  MA_POWERED_OFF=
  MA_T_POWER_ON=$(echo "$out" | head -n 1)
  echo "$out" | tail -n 1
  for i in $(seq 1 100); do
    tail -n +"$((line + 1))" "$BRIDGE_LOG" | grep -q "adapter $MA_FIRST (.*) is powered" && break
    sleep 0.2
  done
  tail -n +"$((line + 1))" "$BRIDGE_LOG" | grep -m1 "adapter $MA_FIRST (.*) is powered" \
    || fail "the bridge did not log 'adapter $MA_FIRST (...) is powered' within 20 s of powering it on" || return
  # nothing may happen now: the sampler's samples over 10 s after the power-on (no event to wait for);
  # the object on the re-powered adapter is not connected (or absent: BlueZ dropped it at power-off)
  out=$("${MA_LINKS_TOOL[@]}" steady "$MA_LINKS" "$MA_T_POWER_ON" 10 "c-$MA_SECOND=1" "c-$MA_FIRST=0|-" 2>&1) \
    || fail "after $MA_FIRST was powered on again: $out" || return
  echo "$out"
  if t=$(rx_py time-of "$MQTT_LOG" "$MA_AVAIL" "$MA_T_POWER_ON" offline 0 2>/dev/null); then
    fail "availability went offline +$(rx_diff "$t" "$MA_T_POWER_ON")s after $MA_FIRST was powered on again"; return 1
  fi
  ma_wait_devices "$MA_SECOND" 1 > /dev/null || return
  echo "$MA_FIRST powered on again: the bridge uses it again, the link stays on $MA_SECOND (10 s of samples, availability online, bridge/devices unchanged)"
}

# never two links at once, over the whole group
ma_one_link() {
  [ -n "$MA_SAMPLER_PID" ] || fail "not run: the links were not sampled (adapters_bridge_start)" || return
  kill -TERM "$MA_SAMPLER_PID" 2>/dev/null; wait "$MA_SAMPLER_PID" 2>/dev/null; MA_SAMPLER_PID=
  [ -s "$SUITE/adapters-links.err" ] && head -n 5 "$SUITE/adapters-links.err"
  "${MA_LINKS_TOOL[@]}" analyze "$MA_LINKS" "c-${MA_NAMES[0]},c-${MA_NAMES[1]}" "p-${MA_NAMES[0]},p-${MA_NAMES[1]}" \
    ${MA_FIRST:+--move "c-$MA_FIRST" "c-$MA_SECOND"}
}

# the suite's bridge again with the suite's config (whatever happened above), for 90-shutdown
ma_restore() {
  local n
  if [ -n "$MA_SAMPLER_PID" ]; then kill -TERM "$MA_SAMPLER_PID" 2>/dev/null; wait "$MA_SAMPLER_PID" 2>/dev/null; MA_SAMPLER_PID=; fi
  if [ -n "$MA_POWERED_OFF" ]; then ma_set_powered "/org/bluez/$MA_FIRST" true || fail "cannot power $MA_FIRST on again" || return; MA_POWERED_OFF=; fi
  if [ -z "$MA_STOPPED_SUITE" ]; then
    need_bridge || return
    echo "the suite's bridge was not stopped here (pid $BRIDGE_PID): nothing to restore"
    return 0
  fi
  bridge_alive && { stop_bridge TERM 20 || return; }
  for n in "${MA_NAMES[@]}"; do
    if [ "$(ma_connected "$n")" = true ]; then
      echo "NOTE: $(ma_dev "$n") still connected after the adapters bridge exited; Device1.Disconnect"
      "$PY" -c 'import dbus, sys; dbus.Interface(dbus.SystemBus().get_object("org.bluez", sys.argv[1]), "org.bluez.Device1").Disconnect()' "$(ma_dev "$n")"
      "${TOOL[@]}" dbus-wait "$(ma_dev "$n")" org.bluez.Device1 Connected false 15 || return
    fi
  done
  rx_start_bridge "$BRIDGE_CONFIG" || return
  rx_wait_online 60 || return
  echo "the suite's bridge again, $MA_AVAIL online $(since "${RX_START_T0/./}")s after the start"
}

check adapters_config ma_config
check adapters_bridge_start ma_bridge_start
check adapters_online ma_online
check adapters_link_found ma_link_found
check adapters_power_off ma_power_off
check adapters_offline_online ma_offline_online
check adapters_values_again ma_values_again
check adapters_devices_other ma_devices_other
check adapters_old_link_down ma_old_link_down
check adapters_left_off ma_left_off
check adapters_power_on_kept ma_power_on_kept
check adapters_one_link ma_one_link
check adapters_restore ma_restore
