# CPU load for the tests (issue 30): two busy processes competing with the tests for the CPUs,
# as on a CI machine that runs something else at the same time.
#
#   . "$(dirname "$0")/lib/load.sh"      (after lib/common.sh)
#   start_load            starts LOAD_CPUS (default 2) busy workers: `stress-ng --cpu N` from
#                         Debian (installed when missing), at the tests' own priority
#   stop_load             stops them (also from an EXIT trap: call it there)
#   with_load CMD...      runs CMD with the load on, and stops the load after it; CMD's status

LOAD_PID=

start_load() {
    [ -z "$LOAD_PID" ] || return 0
    local n=${LOAD_CPUS:-2}
    ensure_packages stress-ng
    # --cpu-method fft: floating point on a small working set, as a compiler or a test process
    # would compete; no --timeout: stop_load ends it (a lost trap still ends it after 3 hours).
    "${DETACH[@]}" stress-ng --cpu "$n" --cpu-method fft --timeout 3h --quiet </dev/null >/dev/null 2>&1 &
    LOAD_PID=$!
    say "load: $n busy workers (stress-ng --cpu $n, pid $LOAD_PID)"
}

stop_load() {
    [ -n "$LOAD_PID" ] || return 0
    # stress-ng's workers are its children: end the whole group (setsid made it the leader).
    kill -TERM -- "-$LOAD_PID" 2>/dev/null || kill -TERM "$LOAD_PID" 2>/dev/null
    stop_pid "$LOAD_PID" 5
    LOAD_PID=
}

with_load() {
    local code
    start_load
    "$@"
    code=$?
    stop_load
    return "$code"
}
