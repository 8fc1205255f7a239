# shellcheck shell=bash
# SPEC §4: bridge/state, availability and bridge/devices are retained: a fresh
# subscriber started now (long after they were published) gets them.

requires_bridge

devices_retained() {
  local got
  got=$(retained "$BASE/bridge/devices")
  [ -n "$got" ] || fail "a fresh subscriber to $BASE/bridge/devices got nothing within 5s (not retained?)" || return
  [ "${got%% *}" = 1 ] || fail "$BASE/bridge/devices arrived without the retain flag" || return
  "${TOOL[@]}" devices "${got#* }" "$DEV" "$RB_PERIPH_ADDR" --connected true --service 180d --service 180f
}

check bridge_state_retained expect_retained "$BASE/bridge/state" online
check availability_retained expect_retained "$BASE/$DEV/availability" online
check devices_retained devices_retained
