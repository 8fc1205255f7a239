#!/bin/bash
# The realbluez suite, run INSIDE the VM by scripts/test-realbluez through
#   run-vm.sh --no-check --cmd "RB_BRIDGE=... Tests/realbluez/run-in-vm.sh"
# Sources lib.sh, then every checks/NN-*.sh in order (RB_GROUPS: a space
# separated list of globs, e.g. "00-* 10-*", to run only some groups).
# Results: $RB_OUT/suite/results.tsv (name, PASS/FAIL, seconds, group, reason),
# checks/NAME.log, bridge.log, bridge.yaml, mqtt.log; $RB_OUT/suite/done at the end.
# stack.sh makes the VM's own stack complete first (it builds the btvirt
# controllers again when the kernel lost one under load). Groups 00-* check
# that stack; when one of them fails nothing else runs and
# $RB_OUT/suite/stack-failed tells the host (which boots again only then).
# Exit status 0 when every check passed.
set -u
RB_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export RB_TESTS RB_LOG_LEVEL=${RB_LOG_LEVEL:-debug}
# The stack first (a btvirt controller the kernel lost under load is built again here, in this
# boot): lib.sh derives the device's paths from the roles it finds.
. "$RB_TESTS/stack.sh"
ensure_stack
. "$RB_TESTS/lib.sh"

suite_init
for f in "$RB_TESTS"/checks/[0-9]*.sh; do
  RB_GROUP=$(basename "$f" .sh)
  if [ -n "${RB_GROUPS:-}" ]; then
    sel=0
    for g in $RB_GROUPS; do
      # shellcheck disable=SC2053
      [[ $RB_GROUP == $g ]] && sel=1
    done
    [ "$sel" = 1 ] || continue
  fi
  say "group $RB_GROUP"
  RB_SKIP_REASON=
  # shellcheck source=/dev/null
  . "$f"
  if [[ $RB_GROUP == 00-* ]] && [ "$N_FAIL" -gt 0 ]; then
    say "the VM's stack is not usable: no bridge checks run"
    touch "$SUITE/stack-failed"
    break
  fi
done
RB_GROUP= RB_SKIP_REASON=
suite_finish
