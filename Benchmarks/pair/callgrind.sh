#!/usr/bin/env bash
# Instructions (callgrind's Ir) a bridge binary executes per value and per advertisement report, on
# a scenario of Benchmarks/pair: for when the shared machine is too noisy for CPU time. Each
# binary in turn (interleaved, ROUNDS times: A B A B ...) runs alone, under
# `valgrind --tool=callgrind`, on a fresh bluez-sim and broker; once it has published 20 messages
# and WARMUP seconds more have passed the counters
# are zeroed (callgrind_control -z), after SECONDS they are dumped (callgrind_control -d), and the
# dump's total Ir is divided by the MQTT messages the bridge published and by the reports the
# simulator signalled (its `advertisement_reports`) in that window.
#
#   Benchmarks/pair/callgrind.sh SCENARIO CONFIG BIN_A BIN_B [SIM_BIN]
#
#   SCENARIO, CONFIG: as for scripts/bench-pair (the bridge runs as side a: base topic `a`).
#   Environment: SECONDS_PER_ROUND (20), WARMUP (10), ROUNDS (2), CG_KEEP (a directory: the dumps
#   are kept there, for callgrind_annotate).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 4 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/lib/common.sh"
scenario=$(realpath "$1") config=$(realpath "$2") bin_a=$(realpath "$3") bin_b=$(realpath "$4")
export BLUEZ_SIM=$(realpath "${5:-${BENCH_SIM:-$ROOT/.build/release/bluez-sim}}")
seconds=${SECONDS_PER_ROUND:-20} warmup=${WARMUP:-10} rounds=${ROUNDS:-2}
work=
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$work" ]; then
        [ -f "$work/mosquitto.pid" ] && kill "$(cat "$work/mosquitto.pid")" 2>/dev/null
        "$ROOT/scripts/sim/stop" "$work" >/dev/null 2>&1
        rm -rf "$work"
    fi
    work= pids=()
}
trap cleanup EXIT
for round in $(seq 1 "$rounds"); do
    for side in A B; do
        bin=$bin_a; [ "$side" = B ] && bin=$bin_b
        work=$(mktemp -d /tmp/bench-callgrind.XXXXXX)
        bus=$("$ROOT/scripts/sim/start-sim" "$work" "$scenario")
        port=$(free_port)
        start_mosquitto "$work" "$port"
        sed -e "s/@PORT@/$port/g" -e "s/@BASE@/a/g" -e "s/@ID@/bench-callgrind/g" "$config" >"$work/bridge.yaml"
        mosquitto_sub -p "$port" -t "a/#" -F '%t' >"$work/sub" 2>/dev/null &
        pids+=($!)
        DBUS_SYSTEM_BUS_ADDRESS=$bus valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
            "$bin" run --config "$work/bridge.yaml" --log-level notice >"$work/bridge.log" 2>&1 &
        pid=$!
        pids+=($pid)
        # Until the bridge publishes (valgrind starts slowly), then WARMUP seconds.
        for _ in $(seq 1 120); do [ "$(wc -l <"$work/sub")" -ge 20 ] && break; sleep 0.5; done
        sleep "$warmup"
        reports() { DBUS_SYSTEM_BUS_ADDRESS=$bus "$ROOT/scripts/sim/simctl" GetStats advertisement_reports; }
        callgrind_control -z "$pid" >/dev/null 2>&1
        n0=$(wc -l <"$work/sub"); r0=$(reports)
        sleep "$seconds"
        callgrind_control -d "$pid" >/dev/null 2>&1
        n1=$(wc -l <"$work/sub"); r1=$(reports)
        sleep 1
        dump=$(ls "$work"/cg.out.* | sort -t. -k3 -n | tail -1)
        ir=$(awk '/^summary:/ { print $2 }' "$dump")
        [ -n "${CG_KEEP:-}" ] && mkdir -p "$CG_KEEP" && cp "$dump" "$CG_KEEP/round$round-$side.callgrind"
        load=$(cut -d' ' -f1 /proc/loadavg)
        awk -v side="$side" -v round="$round" -v ir="$ir" -v n="$((n1 - n0))" -v r="$((r1 - r0))" -v s="$seconds" -v load="$load" 'BEGIN {
            pn = (n > 0) ? ir / n : 0; pr = (r > 0) ? ir / r : 0
            printf "round %d %s: %d messages, %d reports in %d s; %.1f M Ir, %.0f Ir per message, %.0f Ir per report (load %s)\n",
                round, side, n, r, s, ir / 1e6, pn, pr, load
        }'
        cleanup
    done
done
