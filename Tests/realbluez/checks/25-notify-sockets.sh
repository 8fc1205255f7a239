# shellcheck shell=bash
# Issue 12: notifications through AcquireNotify sockets on the real stack.
#   1. the bridge acquires 2A37 (notify) and 2A19 (read, notify): the central's bluetoothd
#      shows NotifyAcquired true for both, the bridge sent AcquireNotify (never StartNotify)
#      for them, and heart rate values arrive (values come over the socket, not D-Bus);
#   2. a link loss (`bluetoothctl disconnect`) is seen by the bridge as the sockets' hang-up
#      (its log), NotifyAcquired goes false, and after the reconnect both are acquired again
#      and values flow.

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

RN_HR_UUID=00002a37-0000-1000-8000-00805f9b34fb
RN_BATTERY_UUID=00002a19-0000-1000-8000-00805f9b34fb

# the bridge's D-Bus method calls of MEMBER on PATH in dbus-monitor's capture
rn_calls() {
  grep -F "path=$1;" "$SUITE/dbus-monitor.txt" | grep -c "interface=org.bluez.GattCharacteristic1; member=$2\$"
}

# NotifyAcquired of PATH is VALUE within SECONDS
rn_acquired() {
  "${TOOL[@]}" dbus-wait "$1" org.bluez.GattCharacteristic1 NotifyAcquired "$2" "$3" > /dev/null 2>&1 \
    || fail "$1: NotifyAcquired is $("${TOOL[@]}" dbus-get "$1" org.bluez.GattCharacteristic1 NotifyAcquired 2>&1), not $2 after $3 s"
}

notify_sockets_acquired() {
  local hr bat
  need_bridge || return
  rx_wait_online 30 || return
  hr=$(rx_char_path "$RN_HR_UUID") || fail "$hr" || return
  bat=$(rx_char_path "$RN_BATTERY_UUID") || fail "$bat" || return
  rn_acquired "$hr" true 10 || return
  rn_acquired "$bat" true 10 || return
  grep -q "AcquireNotify 180d/2a37: notifications over a socket" "$BRIDGE_LOG" \
    || fail "the bridge log does not say 2a37 notifies over an AcquireNotify socket" || return
  ! grep -q "StartNotify instead" "$BRIDGE_LOG" || fail "the bridge fell back to StartNotify: $(grep -m1 'StartNotify instead' "$BRIDGE_LOG")" || return
  [ "$(rn_calls "$hr" StartNotify)" = 0 ] || fail "the bridge called StartNotify on $hr" || return
  rx_wait_after "$BASE/$DEV/180d/2a37" "$(rx_now)" 2 15 || return
  echo "NotifyAcquired true on 2a37 ($hr) and 2a19 ($bat); the bridge acquired them (AcquireNotify in the D-Bus capture: $(rn_calls "$hr" AcquireNotify)x, StartNotify 0x on 2a37); 2 heart rate values since"
}

notify_sockets_link_loss() {
  local hr t0 t_on log0 hung
  need_bridge || return
  rx_wait_online 30 || return
  hr=$(rx_char_path "$RN_HR_UUID") || fail "$hr" || return
  log0=$(wc -l < "$BRIDGE_LOG")
  t0=$(rx_now)
  rx_bluetoothctl 3 "disconnect $RB_PERIPH_ADDR" > "$SUITE/bluetoothctl-disconnect-notify.txt"
  grep -q 'Successful disconnected' "$SUITE/bluetoothctl-disconnect-notify.txt" \
    || fail "bluetoothctl did not disconnect $RB_PERIPH_ADDR" || return
  t_on=$(rx_time_of "$BASE/$DEV/availability" "$t0" online 60) || fail "not online again: $t_on; $(device_state)" || return
  hung=$(tail -n +"$((log0 + 1))" "$BRIDGE_LOG" | grep -c "notification socket of $hr.* hung up" || true)
  [ "$hung" -ge 1 ] || fail "the bridge log shows no hang-up of $hr's notification socket after the disconnect" || return
  rn_acquired "$hr" true 20 || return
  rx_wait_after "$BASE/$DEV/180d/2a37" "$t_on" 3 20 || return
  echo "disconnect: the bridge saw the socket of 2a37 hang up ($hung log line(s)), online +$(rx_diff "$t_on" "$t0")s, NotifyAcquired true again, 3 heart rate values after it"
}

check notify_sockets_acquired notify_sockets_acquired
check notify_sockets_link_loss notify_sockets_link_loss
