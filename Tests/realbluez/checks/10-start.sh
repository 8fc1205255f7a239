# shellcheck shell=bash
# Start the bridge: `ble-mqtt-bridge run` on the central adapter, services ["180d"].

config_valid() {
  [ -x "${RB_BRIDGE:-}" ] || fail "no bridge executable at '${RB_BRIDGE:-}' (RB_BRIDGE)" || return
  render_config || return
  "$RB_BRIDGE" check-config --config "$BRIDGE_CONFIG" || fail "check-config rejects $BRIDGE_CONFIG (status $?)" || return
  echo "check-config accepts $BRIDGE_CONFIG"
}

check config_valid config_valid
check bridge_starts start_bridge
