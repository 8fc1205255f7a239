# shellcheck shell=bash
# SPEC §5, issue 5: known peripherals and recovery on the real stack.
#   1. the bridge stopped (SIGTERM) and started again in the same VM with the same config
#      (state_file under $RB_OUT) goes for the stored peripheral before any scan result:
#      its log takes the stored peripheral before "scanning on", and on D-Bus Device1.Connect
#      comes before Adapter1.StartDiscovery; "stored peripheral ... publishing N ms after
#      start" is recorded in suite/recovery.txt; characteristics whose read was refused for
#      lack of pairing are in the state file and not read again;
#   2. `bluetoothctl disconnect` of the peripheral on the central controller: availability
#      offline, then online, heart rate values again;
#   3. bluetoothd stopped and started again the way guest-init.sh started it (the example
#      peripheral's GATT application and advertisements are registered with bluetoothd, so
#      they are started again too): availability offline, then online, heart rate values
#      again, same bridge process.
# Must run before 90-shutdown (which stops the bridge this group leaves running).

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

RX_AVAIL=$BASE/$DEV/availability
RX_HR=$BASE/$DEV/180d/2a37
RX_RECOVERY_CONFIG=
RX_STATE_FILE=
RX_BTD_T0=
RX_BTD_OK=

# the config's top-level state_file (empty if none)
rx_state_file_of() {
  sed -n 's/^state_file:[[:space:]]*//p' "$1" | sed 's/[[:space:]]#.*$//; s/^["'\'']//; s/["'\'']$//' | tail -n 1
}

# wait until the state file lists the peripheral
rx_wait_state_file() {
  local i
  for i in $(seq 1 150); do
    grep -qi "\"$RB_PERIPH_ADDR\"" "$RX_STATE_FILE" 2>/dev/null && return 0
    sleep 0.2
  done
  fail "$RX_STATE_FILE does not list $RB_PERIPH_ADDR after 30s: $(head -c 300 "$RX_STATE_FILE" 2>&1)"
}

# the config the restarts use: the suite's, or (when it has no state_file) one derived from it,
# with which the bridge is restarted once so that it stores the peripheral
recovery_config() {
  need_bridge || return
  RX_STATE_FILE=$(rx_state_file_of "$BRIDGE_CONFIG")
  if [ -n "$RX_STATE_FILE" ]; then
    RX_RECOVERY_CONFIG=$BRIDGE_CONFIG
  else
    RX_RECOVERY_CONFIG=$SUITE/bridge-recovery.yaml
    RX_STATE_FILE=$SUITE/state/peripherals.json
    mkdir -p "$SUITE/state"
    { cat "$BRIDGE_CONFIG"; echo "state_file: $RX_STATE_FILE"; } > "$RX_RECOVERY_CONFIG"
    echo "$BRIDGE_CONFIG has no state_file: restarting the bridge with $RX_RECOVERY_CONFIG to store the peripheral"
    stop_bridge TERM 20 || return
    rx_start_bridge "$RX_RECOVERY_CONFIG" || return
  fi
  rx_wait_state_file || return
  cat "$RX_STATE_FILE" | head -c 600; echo
  echo "state_file $RX_STATE_FILE lists $RB_PERIPH_ADDR (config $RX_RECOVERY_CONFIG)"
}

# SIGTERM, start again. A link the old bridge left up (90-shutdown's device_disconnected checks
# that) is taken down first, so that the new bridge has to connect, not just take the link over.
bridge_restart() {
  local c out
  [ -n "$RX_RECOVERY_CONFIG" ] || fail "no config with a state_file (see recovery_config)" || return
  stop_bridge TERM 20 || return
  c=$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 Connected 2>&1)
  if [ "$c" = true ]; then
    echo "NOTE: the bridge exited leaving $RB_PERIPH_ADDR connected; Device1.Disconnect before the restart"
    echo "link left up by the bridge at exit (before its restart)" >> "$SUITE/recovery.txt"
    out=$("$PY" -c 'import dbus, sys; dbus.Interface(dbus.SystemBus().get_object("org.bluez", sys.argv[1]), "org.bluez.Device1").Disconnect()' "$DEV_PATH" 2>&1) \
      || fail "Device1.Disconnect: $out" || return
    "${TOOL[@]}" dbus-wait "$DEV_PATH" org.bluez.Device1 Connected false 15 || return
  else
    echo "$DEV_PATH Connected: $c"
  fi
  rx_start_bridge "$RX_RECOVERY_CONFIG"
}

# the stored peripheral publishes again; N from the bridge's log, and the MQTT times
stored_first_value() {
  local ms t_hr t_on line
  need_bridge || return
  [ -n "${RX_START_T0:-}" ] || fail "the bridge was not restarted" || return
  ms=$(rx_py publishing-ms "$BRIDGE_LOG" "$RX_START_LINE" "$RB_PERIPH_ADDR" 60) || fail "$ms" || return
  t_on=$(rx_time_of "$RX_AVAIL" "$RX_START_T0" online 30) || fail "$t_on" || return
  rx_wait_after "$RX_HR" "$RX_START_T0" 3 30 || return
  t_hr=$(rx_py wait-after "$MQTT_LOG" "$RX_HR" "$RX_START_T0" 1 0 | sed -n '1s/^+\([0-9.]*\)s .*/\1/p')
  line="after the restart: stored peripheral publishing $ms ms after start (bridge log); on MQTT availability online +$(rx_diff "$t_on" "$RX_START_T0")s, first 2a37 value +${t_hr}s after the process started"
  echo "$line" >> "$SUITE/recovery.txt"
  echo "$line"
}

# the restarted bridge went for the stored peripheral before scanning (its log, and D-Bus)
stored_connect_before_scan() {
  local out
  [ -n "${RX_START_LINE:-}" ] || fail "the bridge was not restarted" || return
  local log
  log=$(rx_py log-order "$BRIDGE_LOG" "$RX_START_LINE" "$RB_PERIPH_ADDR") || fail "$log" || return
  echo "$log"
  out=$(rx_py dbus-order "$SUITE/dbus-monitor.txt" "$RX_START_T0" "$DEV_PATH") || fail "$out" || return
  echo "$out"
  echo "connected before scanning: ${log##*$'\n'log: }; ${out#D-Bus after the restart: }"
}

# The encrypted test characteristics (...def3, ...def5) refused their read for lack of pairing
# (BlueZ 5.66 tried to pair and dropped the link). The state file remembers them, so the
# restarted bridge does not read them again: no new refusal in its log, the link stays up.
unreadable_remembered() {
  local after
  [ -n "${RX_START_LINE:-}" ] || fail "the bridge was not restarted" || return
  "$PY" - "$RX_STATE_FILE" "$RB_PERIPH_ADDR" <<'EOF2' || return 1
import json, sys
state = json.load(open(sys.argv[1]))
entry = [p for p in state["peripherals"] if p["address"].upper() == sys.argv[2].upper()]
if not entry:
    print("the state file does not list %s" % sys.argv[2]); sys.exit(1)
have = set(entry[0].get("unreadable", []))
want = {"12345678-1234-5678-1234-56789abcdef3", "12345678-1234-5678-1234-56789abcdef5"}
if not want <= have:
    print("state file 'unreadable' is %s, expected it to hold %s" % (sorted(have), sorted(want))); sys.exit(1)
print("state file: unreadable %s" % sorted(have))
EOF2
  after=$(tail -n +"$((RX_START_LINE + 1))" "$BRIDGE_LOG" | grep -c 'needs pairing')
  [ "$after" = 0 ] || fail "the restarted bridge read a pairing-refused characteristic again ($after refusals in its log)" || return
  echo "def3 and def5 remembered in the state file; the restarted bridge did not read them again"
}

# bluetoothctl disconnect on the central controller: offline, online, values again
ble_disconnect_recovers() {
  local t0 t_off t_on pid=$BRIDGE_PID
  need_bridge || return
  rx_wait_online 30 || return
  t0=$(rx_now)
  rx_bluetoothctl 3 "disconnect $RB_PERIPH_ADDR" > "$SUITE/bluetoothctl-disconnect.txt"
  grep -E -i 'disconnect|Controller' "$SUITE/bluetoothctl-disconnect.txt" | head -n 8
  grep -q 'Successful disconnected' "$SUITE/bluetoothctl-disconnect.txt" \
    || fail "bluetoothctl did not disconnect $RB_PERIPH_ADDR: $(grep -i -m1 -E 'fail|error|not available' "$SUITE/bluetoothctl-disconnect.txt")" || return
  t_off=$(rx_time_of "$RX_AVAIL" "$t0" offline 20) || fail "$t_off (bluetoothctl: $(grep -i -m1 'disconnect' "$SUITE/bluetoothctl-disconnect.txt"))" || return
  t_on=$(rx_time_of "$RX_AVAIL" "$t_off" online 60) || fail "offline +$(rx_diff "$t_off" "$t0")s, then $t_on; $(device_state)" || return
  rx_wait_after "$RX_HR" "$t_on" 3 20 || return
  [ "$BRIDGE_PID" = "$pid" ] && bridge_alive || fail "the bridge process changed or exited" || return
  echo "bluetoothctl disconnect: availability offline +$(rx_diff "$t_off" "$t0")s, online +$(rx_diff "$t_on" "$t0")s, 3 heart rate values after it"
}


# stop bluetoothd (SIGTERM), start it again as guest-init.sh does (`bluetoothd -n -d`, log
# appended), then the example peripheral (GATT application, advertisements) the same way
bluetoothd_restarted() {
  local old new i env rbdir periph advn gs adv off_gs off_adv n
  need_bridge || return
  old=$(pidof bluetoothd) || fail "no bluetoothd running" || return
  [ "$(echo "$old" | wc -w)" = 1 ] || fail "more than one bluetoothd: $old" || return
  env=$( . "$RB_OUT/job.env" 2>/dev/null; echo "${RB_DIR:-/work/shared/realbluez} ${RB_PERIPHERAL:-hci0} ${RB_ADV_INSTANCES:-2}")
  read -r rbdir periph advn <<< "$env"
  if [ "$periph" != auto ] && [ -f /run/rb-examples/example-gatt-server ]; then
    gs=/run/rb-examples/example-gatt-server adv=/run/rb-examples/example-advertisement
  else
    gs=/usr/share/doc/bluez-test-scripts/examples/example-gatt-server
    adv=/usr/share/doc/bluez-test-scripts/examples/example-advertisement
  fi
  RX_BTD_T0=$(rx_now)
  echo "stopping bluetoothd (pid $old) with SIGTERM"
  kill -TERM "$old" || fail "kill -TERM $old failed" || return
  for i in $(seq 1 100); do [ -d "/proc/$old" ] || break; sleep 0.1; done
  [ -d "/proc/$old" ] && { echo "bluetoothd $old still running after 10s: SIGKILL"; kill -KILL "$old"; sleep 0.5; }
  # the example peripheral registered with the old bluetoothd: stop it (it would not register again)
  for n in $(rx_pids_of "$gs") $(rx_pids_of "$adv"); do
    kill -TERM "$n" 2>/dev/null && echo "stopped example process $n"
  done
  echo "==== rbtest: bluetoothd restarted by 50-recovery at $(date -u +%FT%T.%3NZ)" >> "$RB_OUT/logs/bluetoothd.log"
  /usr/libexec/bluetooth/bluetoothd -n -d >> "$RB_OUT/logs/bluetoothd.log" 2>&1 < /dev/null &
  new=$!
  echo "started bluetoothd (pid $new) $(since "${RX_BTD_T0/./}")s after the SIGTERM"
  timeout 60 "$PY" -u "$rbdir/rb_prep.py" power > "$SUITE/rb_prep-restart.log" 2>&1 \
    || fail "adapters after the bluetoothd restart: $(tail -n 1 "$SUITE/rb_prep-restart.log")" || return
  tail -n 3 "$SUITE/rb_prep-restart.log"
  off_gs=$(rx_file_size "$RX_GATT_LOG")
  off_adv=$(rx_file_size "$RB_OUT/logs/advertisement.log")
  echo "==== rbtest: restarted after bluetoothd" >> "$RX_GATT_LOG"
  "$PY" -u "$gs" >> "$RX_GATT_LOG" 2>&1 < /dev/null &
  "$PY" -u "$adv" >> "$RB_OUT/logs/advertisement.log" 2>&1 < /dev/null &
  if [ "$advn" -ge 2 ]; then
    sleep 1
    "$PY" -u "$adv" >> "$RB_OUT/logs/advertisement2.log" 2>&1 < /dev/null &
  fi
  rx_gatt_log "$off_gs" '^GATT application registered' 30 || return
  rx_py gatt-log "$RB_OUT/logs/advertisement.log" "$off_adv" '^Advertisement registered' 30 || return
  for i in $(seq 1 100); do
    n=$("${TOOL[@]}" dbus-get "$RB_PERIPH_ADAPTER" org.bluez.LEAdvertisingManager1 ActiveInstances 2>/dev/null) && [ "$n" -ge 1 ] && break
    sleep 0.2
  done
  [ "${n:-0}" -ge 1 ] 2>/dev/null || fail "$RB_PERIPH_ADAPTER has no active advertisement after the restart" || return
  RX_BTD_OK=1
  echo "bluetoothd restarted (pid $old -> $new), the peripheral registered again and advertising ($n instance(s)) $(since "${RX_BTD_T0/./}")s after the SIGTERM"
}

# the bridge survived it: offline, online, values again, same process
bluetoothd_restart_survived() {
  local t_off t_on pid=$BRIDGE_PID
  [ -n "$RX_BTD_T0" ] || fail "not run: bluetoothd was not restarted" || return
  bridge_alive || fail "the bridge exited (status $BRIDGE_RC) after the bluetoothd restart" || return
  [ -n "$RX_BTD_OK" ] || fail "not run: the VM's stack did not come back after the bluetoothd restart (bluetoothd_restarted)" || return
  t_off=$(rx_time_of "$RX_AVAIL" "$RX_BTD_T0" offline 5) || fail "$t_off" || return
  t_on=$(rx_time_of "$RX_AVAIL" "$t_off" online 90) || fail "offline +$(rx_diff "$t_off" "$RX_BTD_T0")s, then $t_on; $(device_state)" || return
  rx_wait_after "$RX_HR" "$t_on" 3 20 || return
  [ "$BRIDGE_PID" = "$pid" ] && bridge_alive || fail "the bridge process changed or exited" || return
  echo "bluetoothd restart: availability offline +$(rx_diff "$t_off" "$RX_BTD_T0")s, online +$(rx_diff "$t_on" "$RX_BTD_T0")s after the SIGTERM, 3 heart rate values after it, same bridge process"
}

check recovery_config recovery_config
check bridge_restart bridge_restart
check stored_first_value stored_first_value
check stored_connect_before_scan stored_connect_before_scan
check unreadable_remembered unreadable_remembered
check ble_disconnect_recovers ble_disconnect_recovers
check bluetoothd_restarted bluetoothd_restarted
check bluetoothd_restart_survived bluetoothd_restart_survived
dump_bluez after-recovery
