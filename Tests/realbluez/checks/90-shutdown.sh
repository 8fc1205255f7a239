# shellcheck shell=bash
# SPEC §2: SIGTERM -> publish offline, disconnect cleanly, exit 0. Keep this group last.

# the broker saw an MQTT DISCONNECT (not a dropped socket, whose will would also say offline)
mqtt_clean_disconnect() {
  local id=ble-mqtt-bridge-realbluez log=$RB_OUT/logs/mosquitto.log
  grep -q "Client $id disconnected\." "$log" && { echo "mosquitto: Client $id disconnected."; return 0; }
  fail "mosquitto.log has no clean disconnect of $id: $(grep -F "$id" "$log" | tail -n 1)"
}

check sigterm_exit_0 stop_bridge TERM 20
check state_offline_retained expect_retained "$BASE/bridge/state" offline
check availability_offline_retained expect_retained "$BASE/$DEV/availability" offline
check mqtt_clean_disconnect mqtt_clean_disconnect
check device_disconnected "${TOOL[@]}" dbus-wait "$DEV_PATH" org.bluez.Device1 Connected false 10
