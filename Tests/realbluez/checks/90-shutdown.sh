# shellcheck shell=bash
# SPEC §2: SIGTERM -> publish offline, disconnect cleanly, exit 0. Keep this group last.

requires_bridge

# the broker saw an MQTT DISCONNECT (not a dropped socket, whose will would also say offline)
mqtt_clean_disconnect() {
  local id=ble-mqtt-bridge-realbluez log=$RB_OUT/logs/mosquitto.log last
  last=$(grep -F "Client $id " "$log" | tail -n 1)
  case "$last" in
    *"Client $id disconnected.") echo "mosquitto: $last" ;;
    *) fail "mosquitto.log: the bridge's last connection did not end with DISCONNECT: '${last:-no line for $id}'" ;;
  esac
}

# BlueZ: the central is no longer connected to the peripheral (or the bridge removed the device)
device_disconnected() {
  local out
  out=$("${TOOL[@]}" dbus-wait "$DEV_PATH" org.bluez.Device1 Connected false 10) && { echo "$out"; return 0; }
  case "$out" in
    *UnknownObject*|*"doesn't exist"*) echo "BlueZ has no $DEV_PATH any more (removed)"; return 0 ;;
  esac
  fail "$out"
}

check sigterm_exit_0 stop_bridge TERM 20
check state_offline_retained expect_retained "$BASE/bridge/state" offline
check availability_offline_retained expect_retained "$BASE/$DEV/availability" offline
check mqtt_clean_disconnect mqtt_clean_disconnect
check device_disconnected device_disconnected
dump_bluez after-exit
