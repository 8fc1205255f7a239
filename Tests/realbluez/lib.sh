# shellcheck shell=bash
# The realbluez suite's check framework and helpers. Sourced by run-in-vm.sh
# (INSIDE the VM); every checks/NN-group.sh is sourced after it, in order.
#
# Writing a check (see README.md):
#   check NAME COMMAND [ARGS...]
# runs COMMAND in the suite's shell (so it may set variables, e.g. BRIDGE_PID)
# with its output in $SUITE/checks/NAME.log. Exit status 0 = PASS. The last
# non-empty output line is the check's reason/summary, shown on the host.
# Commands must `return`, never `exit`. `fail MESSAGE` prints and returns 1.

RB_OUT=${RB_OUT:-/rb}
SUITE=${RB_SUITE_DIR:-$RB_OUT/suite}
PY=/usr/bin/python3                       # Debian's python3: has python3-dbus
TOOL=("$PY" "$RB_TESTS/rbtool.py")
MQTT_HOST=${MQTT_HOST:-127.0.0.1}
MQTT_PORT=${MQTT_PORT:-1883}
BASE=${RB_BASE_TOPIC:-ble}
# the device's topic segment: its address, lowercase, no colons (SPEC §4)
DEV=${RB_DEVICE:-$(printf '%s' "${RB_PERIPH_ADDR:-}" | tr -d : | tr 'A-F' 'a-f')}
# BlueZ object of the peripheral as the central adapter sees it
DEV_PATH=${RB_CENTRAL_ADAPTER:-/org/bluez/hci1}/dev_$(printf '%s' "${RB_PERIPH_ADDR:-}" | tr : _)
MQTT_LOG=$SUITE/mqtt.log                  # every message on $BASE/# (recorder)
BRIDGE_LOG=$SUITE/bridge.log
BRIDGE_CONFIG=$SUITE/bridge.yaml
BRIDGE_PID= BRIDGE_RC= RECORDER_PID= MONITOR_PID=
N_PASS=0 N_FAIL=0

now() { local t=$EPOCHREALTIME; echo "${t/./}"; }          # microseconds
# since T0: seconds (3 decimals) since T0, a value of $(now)
since() { local d=$(( ($(now) - $1) / 1000 )); echo "$((d / 1000)).$(printf %03d $((d % 1000)))"; }
say() { echo "rbtest: $*"; }
# fail MESSAGE: print the reason, return 1. Use as: COND || fail "why" || return
fail() { echo "$*"; return 1; }

# check NAME COMMAND [ARGS...]: run one check, record PASS/FAIL in results.tsv
# (FAIL "not run: ..." without running it when RB_SKIP_REASON is set, see requires_bridge)
check() {
  local name=$1; shift
  local out=$SUITE/checks/$name.log t0 rc reason status dt
  t0=$(now)
  if [ -n "${RB_SKIP_REASON:-}" ]; then
    echo "not run: $RB_SKIP_REASON" > "$out"; rc=1
  else
    { "$@"; } > "$out" 2>&1 < /dev/null
    rc=$?
  fi
  dt=$(since "$t0")
  reason=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1 | tr '\t\r' '  ' | cut -c1-400)
  if [ "$rc" = 0 ]; then status=PASS N_PASS=$((N_PASS + 1)); else status=FAIL N_FAIL=$((N_FAIL + 1)); fi
  [ -n "$reason" ] || reason="exit status $rc"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$dt" "${RB_GROUP:-}" "$reason" >> "$SUITE/results.tsv"
  say "$status $name (${dt}s) $reason"
  return 0
}

# ---------------------------------------------------------------- MQTT

# record every message under $BASE/# (and rbtest/#) with a timestamp, from before the bridge starts
start_recorder() {
  [ -n "$RECORDER_PID" ] && return 0
  mosquitto_sub -h "$MQTT_HOST" -p "$MQTT_PORT" -i rbtest-recorder -t "$BASE/#" -t 'rbtest/#' \
    -F '%U %j' > "$MQTT_LOG" 2> "$SUITE/recorder.err" &
  RECORDER_PID=$!
  # it is subscribed once it sees our own marker
  local i
  for i in $(seq 1 50); do
    mosquitto_pub -h "$MQTT_HOST" -p "$MQTT_PORT" -t rbtest/marker -m "recorder $i" 2>/dev/null
    grep -q '"topic":"rbtest/marker"' "$MQTT_LOG" 2>/dev/null && return 0
    sleep 0.2
  done
  fail "MQTT recorder not subscribed after 10s: $(cat "$SUITE/recorder.err")"
}

# start_dbus_monitor: everything org.bluez sends and receives -> $SUITE/dbus-monitor.txt
# (diagnostics: the order of signals on the real bus, e.g. for bluez-sim)
start_dbus_monitor() {
  [ -n "$MONITOR_PID" ] || [ "${RB_DBUS_MONITOR:-1}" = 0 ] && return 0
  command -v dbus-monitor > /dev/null || return 0
  # Line-buffered: checks read the capture while it runs.
  stdbuf -oL dbus-monitor --system "sender='org.bluez'" "destination='org.bluez'" > "$SUITE/dbus-monitor.txt" 2>&1 &
  MONITOR_PID=$!
}

# wait_messages TOPIC N TIMEOUT: N messages on TOPIC (filter) in the recorder log
wait_messages() { "${TOOL[@]}" wait "$MQTT_LOG" "$@"; }

# wait_device_messages TOPIC N TIMEOUT: like wait_messages; on failure the reason
# also tells what BlueZ says about the peripheral (connected? resolved?)
wait_device_messages() {
  local out
  out=$(wait_messages "$@") && { echo "$out"; return 0; }
  echo "$out" | head -n -1
  fail "${out##*$'\n'}; $(device_state)"
}

# device_state: the peripheral's Device1 state as the central adapter sees it, one line
device_state() {
  local p v s=""
  for p in Connected ServicesResolved; do
    v=$("${TOOL[@]}" dbus-get "$DEV_PATH" org.bluez.Device1 "$p" 2>&1) || { echo "BlueZ has no $DEV_PATH"; return 0; }
    s="$s $p=$v"
  done
  echo "BlueZ:${s}"
}

# dump_bluez NAME: BlueZ's objects of the peripheral (device, services, characteristics,
# descriptors with all properties) -> $SUITE/bluez-NAME.json (diagnostics, not a check)
dump_bluez() { "${TOOL[@]}" dbus-tree "$DEV_PATH" "$SUITE/bluez-$1.json" > /dev/null 2>&1; }

# last_payload TOPIC: the last recorded payload on TOPIC (status 1 and a reason if none)
last_payload() { "${TOOL[@]}" last "$MQTT_LOG" "$1"; }

# retained TOPIC: what a fresh subscriber gets: "RETAINFLAG PAYLOAD" (empty if nothing within 5s)
retained() {
  mosquitto_sub -h "$MQTT_HOST" -p "$MQTT_PORT" -t "$1" -C 1 -W "${2:-5}" -F '%r %p' 2>/dev/null
}

# expect_retained TOPIC PAYLOAD: a fresh subscriber gets PAYLOAD with the retain flag
expect_retained() {
  local got
  got=$(retained "$1")
  [ -n "$got" ] || fail "a fresh subscriber to $1 got nothing within 5s (not retained?)" || return
  [ "${got%% *}" = 1 ] || fail "$1: '${got#* }' arrived without the retain flag" || return
  [ "${got#* }" = "$2" ] || fail "$1 is '${got#* }' (retained), expected '$2'" || return
  echo "$1 = '$2' (retained)"
}

# no_retained FILTER: a fresh subscriber to FILTER gets no retained message (within 2s)
no_retained() {
  local got
  got=$(mosquitto_sub -h "$MQTT_HOST" -p "$MQTT_PORT" -t "$1" -W 2 -F '%r %t %p' 2>/dev/null | grep '^1 ')
  [ -z "$got" ] || fail "retained message(s) under $1: $(echo "$got" | head -3 | tr '\n' ';')" || return
  echo "nothing retained under $1"
}

# mqtt_pub TOPIC PAYLOAD [mosquitto_pub options...]
mqtt_pub() { local t=$1 m=$2; shift 2; mosquitto_pub -h "$MQTT_HOST" -p "$MQTT_PORT" -t "$t" -m "$m" "$@"; }

# mqtt_request TOPIC PAYLOAD REPLY_TOPIC [TIMEOUT]: subscribe to REPLY_TOPIC, publish, print the first reply
mqtt_request() {
  local t=$1 m=$2 r=$3 to=${4:-15} f rc pid
  f=$(mktemp /tmp/rbtest-reply.XXXXXX)
  mosquitto_sub -h "$MQTT_HOST" -p "$MQTT_PORT" -t "$r" -C 1 -W "$to" -R -F '%p' > "$f" 2>/dev/null &
  pid=$!
  sleep 0.3   # mosquitto_sub has no "subscribed" signal; -R skips stale retained replies
  mqtt_pub "$t" "$m" || { kill "$pid" 2>/dev/null; fail "mosquitto_pub to $t failed"; return 1; }
  wait "$pid"; rc=$?
  [ "$rc" = 0 ] && [ -s "$f" ] || { rm -f "$f"; fail "no reply on $r within ${to}s after publishing '$m' to $t"; return 1; }
  cat "$f"; rm -f "$f"
}

# json_expect PAYLOAD PYTHON_EXPR [WHAT]: e.g. json_expect "$p" 'v["value"] == 1' "2a38 value"
json_expect() { "${TOOL[@]}" json "$@"; }

# ---------------------------------------------------------------- the bridge

bridge_alive() {
  [ -n "$BRIDGE_PID" ] && [ -z "$BRIDGE_RC" ] || return 1
  local st
  st=$(awk '{print $3}' "/proc/$BRIDGE_PID/stat" 2>/dev/null) || { reap_bridge; return 1; }
  [ "$st" != Z ] || { reap_bridge; return 1; }
}
reap_bridge() { [ -n "$BRIDGE_RC" ] || { wait "$BRIDGE_PID" 2>/dev/null; BRIDGE_RC=$?; }; }

# requires_bridge: at the top of a group file: its checks FAIL as "not run" when
# the bridge was never started (instead of each waiting for its timeout)
requires_bridge() {
  [ -n "$BRIDGE_PID" ] || RB_SKIP_REASON="the bridge was never started (see bridge_starts)"
}

# need_bridge: fail unless the bridge is running
need_bridge() {
  [ -n "$BRIDGE_PID" ] || fail "the bridge was never started" || return
  bridge_alive || fail "the bridge is not running (exited with status $BRIDGE_RC; see bridge.log)"
}

# render_config: $RB_CONFIG_TEMPLATE (default bridge.yaml.in) -> $BRIDGE_CONFIG
render_config() {
  export MQTT_HOST MQTT_PORT RB_CENTRAL_ADAPTER RB_PERIPH_ADDR RB_BASE_TOPIC=$BASE RB_STATE_DIR=$SUITE/state
  export RB_LOG_LEVEL=${RB_LOG_LEVEL:-debug}
  mkdir -p "$RB_STATE_DIR"
  "${TOOL[@]}" render "${RB_CONFIG_TEMPLATE:-$RB_TESTS/bridge.yaml.in}" "$BRIDGE_CONFIG"
}

# start_bridge [ARGS...]: render the config (unless done), start `ble-mqtt-bridge run`,
# wait for bridge/state online
start_bridge() {
  [ -x "${RB_BRIDGE:-}" ] || fail "no bridge executable at '${RB_BRIDGE:-}' (RB_BRIDGE)" || return
  ! bridge_alive || fail "the bridge is already running (pid $BRIDGE_PID)" || return
  [ -s "$BRIDGE_CONFIG" ] || render_config || return
  start_recorder || return
  start_dbus_monitor
  local t0; t0=$(now)
  "$RB_BRIDGE" run --config "$BRIDGE_CONFIG" "$@" > "$BRIDGE_LOG" 2>&1 < /dev/null &
  BRIDGE_PID=$! BRIDGE_RC=
  echo "started $RB_BRIDGE (pid $BRIDGE_PID) with $BRIDGE_CONFIG"
  local i
  for i in $(seq 1 300); do
    "${TOOL[@]}" wait "$MQTT_LOG" "$BASE/bridge/state" 1 0 2>/dev/null | grep -q ' online$' && {
      echo "$BASE/bridge/state online $(since "$t0")s after start"; return 0; }
    bridge_alive || fail "the bridge exited with status $BRIDGE_RC before publishing $BASE/bridge/state online" || return
    sleep 0.1
  done
  fail "no '$BASE/bridge/state online' within 30s of starting the bridge"
}

# stop_bridge [SIGNAL] [TIMEOUT]: signal the bridge, wait for it, expect exit status 0
stop_bridge() {
  local sig=${1:-TERM} to=${2:-20} t0 i dt
  need_bridge || return
  t0=$(now)
  kill "-$sig" "$BRIDGE_PID" || fail "kill -$sig $BRIDGE_PID failed" || return
  for i in $(seq 1 $((to * 10))); do
    bridge_alive || break
    sleep 0.1
  done
  if bridge_alive; then
    kill -KILL "$BRIDGE_PID" 2>/dev/null; reap_bridge
    fail "the bridge did not exit within ${to}s of SIG$sig (killed)"; return 1
  fi
  dt=$(since "$t0")
  [ "$BRIDGE_RC" = 0 ] || fail "exit status $BRIDGE_RC after SIG$sig (expected 0), after ${dt}s" || return
  echo "exited with status 0, ${dt}s after SIG$sig"
}

# ---------------------------------------------------------------- suite

suite_init() {
  rm -rf "$SUITE"
  mkdir -p "$SUITE/checks"
  : > "$SUITE/results.tsv"
  {
    echo "RB_BRIDGE=${RB_BRIDGE:-}"
    echo "RB_CENTRAL_ADAPTER=${RB_CENTRAL_ADAPTER:-} RB_CENTRAL_ADDR=${RB_CENTRAL_ADDR:-}"
    echo "RB_PERIPH_ADAPTER=${RB_PERIPH_ADAPTER:-} RB_PERIPH_ADDR=${RB_PERIPH_ADDR:-}"
    echo "MQTT=$MQTT_HOST:$MQTT_PORT BASE=$BASE DEV=$DEV DEV_PATH=$DEV_PATH"
  } > "$SUITE/env.txt"
  dmesg > "$SUITE/dmesg-start.txt" 2>&1
  say "suite start: $(tr '\n' ' ' < "$SUITE/env.txt")"
}

suite_finish() {
  if bridge_alive; then
    say "stopping the bridge left running (SIGTERM)"
    kill -TERM "$BRIDGE_PID" 2>/dev/null
    local i; for i in $(seq 1 100); do bridge_alive || break; sleep 0.1; done
    bridge_alive && { kill -KILL "$BRIDGE_PID"; reap_bridge; }
  fi
  [ -n "$RECORDER_PID" ] && kill "$RECORDER_PID" 2>/dev/null
  [ -n "$MONITOR_PID" ] && kill "$MONITOR_PID" 2>/dev/null
  dmesg > "$SUITE/dmesg.txt" 2>&1
  echo "pass=$N_PASS fail=$N_FAIL" > "$SUITE/done"
  say "suite done: $N_PASS passed, $N_FAIL failed"
  [ "$N_FAIL" = 0 ] && [ "$N_PASS" -gt 0 ]
}
