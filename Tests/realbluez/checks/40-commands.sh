# shellcheck shell=bash
# SPEC §4, issue 4: commands over MQTT reach the real peripheral through bluetoothd 5.66,
# and every one gets its result on .../result.
#   - the test characteristic 12345678-...def1 (service ...def0; flags read, write,
#     writable-auxiliaries): a write with response arrives (gatt-server.log prints
#     "TestCharacteristic Write: [...]", btmon shows an ATT Write Request), a write without
#     response arrives as an ATT Write Command (write_types in bridge.yaml.in), and a read
#     reads it back;
#   - 2A39 heart rate control point: 01 is accepted, 02 fails with ATT error 0x80
#     (org.bluez.Error.Failed) -> a gatt_error result naming it; "response": false is refused
#     with unsupported_write_type (its Flags have only write) and nothing is sent;
#   - 2A19 battery level: /get answers with raw and value.
# The bridge maps every service of the peripheral once it connects (it advertises 180D, the
# suite's filter), so the test service has its topics too. Results are looked up in the
# recorder's mqtt.log (lib-extra.sh rx_command).

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

RX_TEST_TOPIC=$BASE/$DEV/$RX_TEST_SVC/$RX_TEST_CHR
RX_WRITE_REQ=c0ffee01     # written with response
RX_WRITE_CMD=c0ffee02     # written without response, then read back

test_chrc_write_request() {
  local r off
  need_bridge || return
  off=$(rx_file_size "$RX_GATT_LOG")
  r=$(rx_command "$RX_TEST_TOPIC/set" "{\"raw\":\"$RX_WRITE_REQ\",\"response\":true,\"transaction\":\"rb-40-w1\"}" '"rb-40-w1"') \
    || fail "$r" || return
  echo "result: $r"
  json_expect "$r" 'v == {"status": "ok", "op": "write", "transaction": "rb-40-w1", "response": True}' \
    "result of the write with response" || return
  rx_gatt_log "$off" '^TestCharacteristic Write: ' 10 "$RX_WRITE_REQ" || return
  rx_att "$RX_WRITE_REQ" 5 || return
  echo "$RX_WRITE_REQ written with response: result ok, the peripheral got it as an ATT Write Request"
}

# "response": false asks for WriteValue type "command". The test characteristic's Flags lack
# write-without-response, but bridge.yaml.in lists it with `write_types: [request, command]`
# (BlueZ 5.66 sends the Write Command anyway and the example peripheral accepts it), so the
# write must reach the peripheral as an ATT Write Command.
test_chrc_write_without_response() {
  local r off path flags att
  need_bridge || return
  path=$(rx_char_path "$RX_TEST_CHR") || fail "$path" || return
  flags=$(rx_flags "$path") || fail "$flags" || return
  echo "$path Flags: $flags (bridge.yaml: write_types [request, command])"
  off=$(rx_file_size "$RX_GATT_LOG")
  r=$(rx_command "$RX_TEST_TOPIC/set" "{\"raw\":\"$RX_WRITE_CMD\",\"response\":false,\"transaction\":\"rb-40-w2\"}" '"rb-40-w2"') \
    || fail "$r" || return
  echo "result: $r"
  json_expect "$r" 'v == {"status": "ok", "op": "write", "transaction": "rb-40-w2", "response": False}' \
    "result of the write without response" || return
  rx_gatt_log "$off" '^TestCharacteristic Write: ' 10 "$RX_WRITE_CMD" || return
  att=$(rx_att "$RX_WRITE_CMD" 5) || fail "$att" || return
  echo "$att"
  [[ $att == *"Write Command"* ]] || fail "sent as ${att##*: }, expected an ATT Write Command" || return
  echo "$RX_WRITE_CMD written without response: result ok, the peripheral got it as an ATT Write Command"
}

# 2A39 announces only `write` and has no write_types: "response": false is refused before
# anything is sent.
hr_control_point_unsupported_type() {
  local r off topic=$BASE/$DEV/180d/2a39 path flags
  need_bridge || return
  path=$(rx_char_path 00002a39-0000-1000-8000-00805f9b34fb) || fail "$path" || return
  flags=$(rx_flags "$path") || fail "$flags" || return
  [[ ",$flags," != *,write-without-response,* ]] || fail "2a39 Flags [$flags] now allow write-without-response" || return
  off=$(rx_file_size "$RX_GATT_LOG")
  r=$(rx_command "$topic/set" '{"raw":"01","response":false,"transaction":"rb-40-u"}' '"rb-40-u"') || fail "$r" || return
  echo "result: $r"
  json_expect "$r" '(v["status"] == "error" and v["op"] == "write" and v["transaction"] == "rb-40-u"
                    and v["response"] is False and v["error"]["code"] == "unsupported_write_type")' \
    "refusal of the write without response to 2a39" || return
  rx_gatt_log "$off" '^Control Point value: ' 2 --absent || return
  echo "2a39 Flags [$flags]: response:false refused with unsupported_write_type, nothing reached the peripheral"
}

test_chrc_read_back() {
  local r off
  need_bridge || return
  off=$(rx_file_size "$RX_GATT_LOG")
  r=$(rx_command "$RX_TEST_TOPIC/get" '{"transaction":"rb-40-r1"}' '"rb-40-r1"') || fail "$r" || return
  echo "result: $r"
  json_expect "$r" "v == {'status': 'ok', 'op': 'read', 'transaction': 'rb-40-r1', 'raw': '$RX_WRITE_CMD', 'value': '$RX_WRITE_CMD'}" \
    "result of the read" || return
  rx_gatt_log "$off" '^TestCharacteristic Read: ' 5 || return
  echo "read back $RX_WRITE_CMD, the last write (result raw and value, the hex text where no format applies)"
}

hr_control_point_ok() {
  local r off topic=$BASE/$DEV/180d/2a39
  need_bridge || return
  off=$(rx_file_size "$RX_GATT_LOG")
  r=$(rx_command "$topic/set" 01) || fail "$r" || return
  echo "result: $r"
  json_expect "$r" 'v == {"status": "ok", "op": "write", "response": True}' "result of 01 to 2a39" || return
  rx_gatt_log "$off" '^Control Point value: (dbus\.Byte\()?1\)?$' 5 || return
  rx_gatt_log "$off" '^Energy Expended field reset!' 5 || return
  echo "bare 01 to $topic/set: result ok with response, the peripheral reset the energy expended"
}

hr_control_point_gatt_error() {
  local r off topic=$BASE/$DEV/180d/2a39
  need_bridge || return
  off=$(rx_file_size "$RX_GATT_LOG")
  r=$(rx_command "$topic/set" 02) || fail "$r" || return
  echo "result: $r"
  json_expect "$r" '(v["status"] == "error" and v["op"] == "write" and "transaction" not in v
                    and v["error"]["code"] == "gatt_error"
                    and v["error"]["message"].startswith("org.bluez.Error.Failed")
                    and "0x80" in v["error"]["message"])' "result of 02 to 2a39" || return
  rx_gatt_log "$off" '^Control Point value: (dbus\.Byte\()?2\)?$' 5 || return
  echo "bare 02 to $topic/set: gatt_error '$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["error"]["message"])' "$r")'"
}

battery_get() {
  local r t0 topic=$BASE/$DEV/180f/2a19 raw
  need_bridge || return
  t0=$(rx_now)
  r=$(rx_command "$topic/get" '{"transaction":7}' 7) || fail "$r" || return
  echo "result: $r"
  json_expect "$r" '(v["status"] == "ok" and v["op"] == "read" and v["transaction"] == 7
                    and re.fullmatch("[0-9a-f]{2}", v["raw"]) is not None
                    and type(v["value"]) is int and v["value"] == int(v["raw"], 16) and 0 <= v["value"] <= 100)' \
    "result of the 2a19 read" || return
  raw=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["raw"])' "$r")
  # the value topic gets it too (the battery also notifies; any value message with these bytes will do)
  rx_wait_after "$topic" "$t0" 1 5 || return
  echo "/get of $topic: result raw $raw value $((16#$raw)), transaction echoed"
}

# commands to a peripheral that is not online would each wait commands.timeout for not_connected:
# say so once instead
if [ -z "${RB_SKIP_REASON:-}" ]; then
  RX_WHY=$(rx_wait_online 30) || RB_SKIP_REASON=${RX_WHY##*$'\n'}
fi
check test_chrc_write_request test_chrc_write_request
check test_chrc_write_without_response test_chrc_write_without_response
check test_chrc_read_back test_chrc_read_back
check hr_control_point_ok hr_control_point_ok
check hr_control_point_gatt_error hr_control_point_gatt_error
check hr_control_point_unsupported_type hr_control_point_unsupported_type
check battery_get battery_get
