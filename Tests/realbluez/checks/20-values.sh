# shellcheck shell=bash
# SPEC §3/§4: notifications and reads of the example peripheral reach MQTT, decoded.
# 2A37 heart rate measurement notifies ~1 Hz ([0x06|0x08, bpm, energy?]); 2A38 reads 01;
# 180F/2A19 battery level reads (and notifies) 100, 98, ...

requires_bridge

hr_measurements() {
  local topic=$BASE/$DEV/180d/2a37
  need_bridge || return
  wait_device_messages "$topic" 6 90 || return
  # Counted from the device's first `online`: setup connections BlueZ drops (encrypted reads
  # without a bond) may deliver a value or two first.
  for _ in $(seq 1 40); do
    "${TOOL[@]}" hr "$MQTT_LOG" "$topic" 6 --after-online "$BASE/$DEV/availability" > /dev/null 2>&1 && break
    sleep 0.5
  done
  "${TOOL[@]}" hr "$MQTT_LOG" "$topic" 6 --after-online "$BASE/$DEV/availability"
}

body_sensor_location() {
  local topic=$BASE/$DEV/180d/2a38
  need_bridge || return
  wait_device_messages "$topic" 1 20 || return
  "${TOOL[@]}" uint8 "$MQTT_LOG" "$topic" --raw 01
}

battery_level() {
  local topic=$BASE/$DEV/180f/2a19
  need_bridge || return
  wait_device_messages "$topic" 1 20 || return
  "${TOOL[@]}" uint8 "$MQTT_LOG" "$topic" --min 0 --max 100
}

check hr_measurements hr_measurements
dump_bluez connected
check body_sensor_location body_sensor_location
check battery_level battery_level
check values_not_retained no_retained "$BASE/$DEV/+/+"
