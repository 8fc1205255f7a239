# shellcheck shell=bash
# The VM's own stack, before the bridge starts. A failure here is the harness's
# (VM, mosquitto, bluetoothd, example peripheral), not the bridge's.

stack_mosquitto() {
  mqtt_pub rbtest/ping hello -r || fail "mosquitto_pub to $MQTT_HOST:$MQTT_PORT failed" || return
  [ "$(retained rbtest/ping 3)" = "1 hello" ] || fail "mosquitto at $MQTT_HOST:$MQTT_PORT does not keep a retained message" || return
  mqtt_pub rbtest/ping '' -r
  echo "mosquitto answers on $MQTT_HOST:$MQTT_PORT"
}

# why the harness has no adapters.env: its own logs say
harness_roles() {
  echo "harness: $(tail -n 1 "$RB_OUT/logs/prep.log" 2>/dev/null) / $(tail -n 1 "$RB_OUT/logs/roles.log" 2>/dev/null)" \
       "/ kernel: $(dmesg 2>/dev/null | grep -i -E 'bluetooth|hci' | grep -i -E 'fail|timeout|error' | tail -n 1)"
}

stack_central_adapter() {
  [ -n "${RB_CENTRAL_ADAPTER:-}" ] || fail "RB_CENTRAL_ADAPTER is not set; $(harness_roles)" || return
  "${TOOL[@]}" dbus-wait "$RB_CENTRAL_ADAPTER" org.bluez.Adapter1 Powered true 10
}

stack_peripheral_advertising() {
  local n
  [ -n "${RB_PERIPH_ADAPTER:-}" ] || fail "RB_PERIPH_ADAPTER is not set; $(harness_roles)" || return
  n=$("${TOOL[@]}" dbus-get "$RB_PERIPH_ADAPTER" org.bluez.LEAdvertisingManager1 ActiveInstances) \
    || fail "$n" || return
  [ "$n" -gt 0 ] || fail "$RB_PERIPH_ADAPTER has no active advertisement" || return
  echo "$RB_PERIPH_ADAPTER ($RB_PERIPH_ADDR) advertises ($n instance(s))"
}

check stack_mosquitto stack_mosquitto
check stack_central_adapter stack_central_adapter
check stack_peripheral_advertising stack_peripheral_advertising
