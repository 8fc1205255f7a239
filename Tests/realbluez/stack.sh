# shellcheck shell=bash
# The VM's Bluetooth stack as the checks need it, made complete INSIDE the VM before the suite
# starts (sourced by run-in-vm.sh, before lib.sh: lib.sh derives the device's paths from
# /rb/adapters.env).
#
# The harness (shared/realbluez/guest-init.sh) starts btvirt with RB_CONTROLLERS controllers,
# powers them, starts BlueZ's example peripheral and writes /rb/adapters.env (the roles). Under
# host load the kernel's init of one btvirt controller can time out (dmesg: `hciN: Opcode 0x0c03
# failed: -110`): the kernel never announces that index, bluetoothd never sees the adapter, and
# the harness goes on without it (`adapter preparation FAILED`, no adapters.env). Booting the VM
# again costs ~75 s and fails the same way on a loaded host; instead, ensure_stack builds the
# controllers again in this VM: it stops the examples and btvirt (their adapters leave
# bluetoothd), starts btvirt again, waits until bluetoothd has every adapter and powers them
# (rb_prep.py power), starts the examples again and waits until one adapter advertises
# (rb_prep.py roles writes adapters.env). It waits for each state it needs, never a fixed time.
#
#   ensure_stack      0 when the stack is complete (at once, or after at most RB_STACK_REPAIRS
#                     rebuilds, default 4); 1 otherwise (then the 00-stack checks say why)

# Adapters bluetoothd has on the bus.
stack_adapters() {
  /usr/bin/python3 - <<'PY' 2>/dev/null || echo 0
import dbus
om = dbus.Interface(dbus.SystemBus().get_object('org.bluez', '/'), 'org.freedesktop.DBus.ObjectManager')
print(sum(1 for ifs in om.GetManagedObjects().values() if 'org.bluez.Adapter1' in ifs))
PY
}

# Whether the roles are known and the peripheral's adapter still advertises.
stack_complete() {
  local want=$1 n
  n=$(stack_adapters)
  [ "$n" -ge "$want" ] && [ -s /rb/adapters.env ] || return 1
  # shellcheck source=/dev/null
  . /rb/adapters.env
  [ -n "${RB_PERIPH_ADAPTER:-}" ] && [ -n "${RB_CENTRAL_ADAPTER:-}" ]
}

# wait_until SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds; 1 on timeout.
stack_wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

stack_no_adapters() { [ "$(stack_adapters)" = 0 ]; }

stack_examples_registered() {
  grep -q 'GATT application registered' /rb/logs/gatt-server.log 2>/dev/null \
    && grep -q -E 'Advertisement registered|Failed' /rb/logs/advertisement.log 2>/dev/null
}

# One rebuild of the controllers and the example peripheral, as guest-init.sh does it.
stack_rebuild() {
  local want=$1 ex=/usr/share/doc/bluez-test-scripts/examples gs adv
  gs=$ex/example-gatt-server adv=$ex/example-advertisement
  # guest-init.sh's copies pinned to RB_PERIPHERAL, when it made them
  [ -f /run/rb-examples/example-gatt-server ] && gs=/run/rb-examples/example-gatt-server
  [ -f /run/rb-examples/example-advertisement ] && adv=/run/rb-examples/example-advertisement
  rm -f /rb/adapters.env
  pkill -f example-advertisement 2>/dev/null
  pkill -f example-gatt-server 2>/dev/null
  pkill -x btvirt 2>/dev/null
  stack_wait_until 20 stack_no_adapters || { echo "stack: bluetoothd still has $(stack_adapters) adapters after btvirt stopped"; return 1; }
  btvirt -L -l"$want" >> /rb/logs/btvirt.log 2>&1 &
  RB_CONTROLLERS=$want timeout 60 /usr/bin/python3 -u "$RB_DIR/rb_prep.py" power >> /rb/logs/prep.log 2>&1 \
    || { echo "stack: $(tail -n 1 /rb/logs/prep.log)"; return 1; }
  : > /rb/logs/gatt-server.log
  : > /rb/logs/advertisement.log
  /usr/bin/python3 -u "$gs" >> /rb/logs/gatt-server.log 2>&1 &
  /usr/bin/python3 -u "$adv" >> /rb/logs/advertisement.log 2>&1 &
  # The second instance makes the kernel rotate instances (see guest-init.sh).
  if [ "${RB_ADV_INSTANCES:-2}" -ge 2 ]; then
    stack_wait_until 20 stack_examples_registered
    /usr/bin/python3 -u "$adv" >> /rb/logs/advertisement2.log 2>&1 &
  fi
  stack_wait_until 20 stack_examples_registered || { echo "stack: the example peripheral did not register"; return 1; }
  timeout 30 /usr/bin/python3 -u "$RB_DIR/rb_prep.py" roles >> /rb/logs/roles.log 2>&1 \
    || { echo "stack: $(tail -n 1 /rb/logs/roles.log)"; return 1; }
  echo "stack: rebuilt, $(stack_adapters) adapters on bluetoothd, roles in /rb/adapters.env"
}

ensure_stack() {
  # shellcheck source=/dev/null
  [ -f /rb/job.env ] && . /rb/job.env
  local want=${RB_CONTROLLERS:-2} try
  for ((try = 1; try <= ${RB_STACK_REPAIRS:-4}; try++)); do
    stack_complete "$want" && break
    echo "rbtest: the VM's Bluetooth stack is incomplete ($(stack_adapters) of $want adapters on bluetoothd$([ -s /rb/adapters.env ] || echo ', no roles')): building the controllers again ($try of ${RB_STACK_REPAIRS:-4})"
    echo "before repair $try: $(dmesg | grep -i -E 'hci[0-9]+: .*(fail|timeout)' | tail -n 1)" >> /rb/logs/stack-repair.log
    stack_rebuild "$want" >> /rb/logs/stack-repair.log 2>&1
    echo "rbtest: stack repair $try: $(tail -n 1 /rb/logs/stack-repair.log)"
  done
  stack_complete "$want" || return 1
  [ "$try" -gt 1 ] && echo "rbtest: the VM's Bluetooth stack is complete after $((try - 1)) repair(s)"
  export RB_PERIPH_ADAPTER RB_CENTRAL_ADAPTER RB_PERIPH_ADDR RB_CENTRAL_ADDR RB_OTHER_ADAPTERS
  return 0
}
