#!/usr/bin/env bash
# Two bridge binaries (old and new) side by side (scripts/bench-pair) on
# the GATT notification path (10 peripherals x 100/s per bridge, one characteristic each: each
# bridge its own set, afe0/afe1 and bfe0/bfe1, see notify10x100.yaml) and the advertisement path
# (10 pvvx sensors x 100/s, shared), OLD as A and NEW as B. The notification figure is noisy:
# per-round (B-A)/A ranged -42...+123 % on 2026-11-28 and the same binary as A and B gave +26 %
# over 4 rounds; read the median of the per-round differences and repeat with A and B swapped.
#
#   Benchmarks/pair/run.sh OLD_BIN NEW_BIN [SIM_BIN]
#
#   OLD_BIN, NEW_BIN  (A and B) release ble-mqtt-bridge binaries (e.g. a clone of the old commit: CLONE/.build/release/ble-mqtt-bridge)
#   SIM_BIN           release bluez-sim (default: $BENCH_SIM, else this checkout's release build, built if missing)
#   Environment: SECONDS_PER_ROUND (15), ROUNDS (4), REPO (checkout whose scripts/bench-pair is
#   used; default this checkout), PATHS ("notify pvvx"; also "quiet": one sensor per bridge at
#   10 values/s, "quiet-ads": the same among 1,000 pvvx frames/s that no bridge configures).
# Output: the machine, the load average before and after, each path's per-round lines and means;
# also written to $BENCH_LOG (default /tmp/bench-pair-<UTC time>.log).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
repo=${REPO:-$(cd "$HERE/../.." && pwd)}
if [ -z "${3:-${BENCH_SIM:-}}" ]; then
    [ -x "$repo/.build/release/bluez-sim" ] || (cd "$repo" && swift build -c release --product bluez-sim >/dev/null)
fi
sim=$(realpath "${3:-${BENCH_SIM:-$repo/.build/release/bluez-sim}}")
for b in "$old" "$new" "$sim"; do [ -x "$b" ] || { echo "run.sh: not an executable: $b" >&2; exit 1; }; done
seconds=${SECONDS_PER_ROUND:-15} rounds=${ROUNDS:-4}
log=${BENCH_LOG:-/tmp/bench-pair-$(date -u +%Y%m%dT%H%M%SZ).log}
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(uname -r)"
    echo "A (first argument, a/...): $old"; echo "B (second argument, b/...): $new"; echo "bluez-sim: $sim"
    echo "bench-pair: $repo/scripts/bench-pair --seconds $seconds --rounds $rounds"
    echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    for path in ${PATHS:-notify pvvx}; do
        case $path in
            notify) scenario=$HERE/notify10x100.yaml config=$HERE/notify-bridge.yaml ;;
            pvvx) scenario=$HERE/pvvx.yaml config=$HERE/pvvx-bridge.yaml ;;
            quiet) scenario=$HERE/quiet.yaml config=$HERE/quiet-bridge.yaml ;;
            quiet-ads) scenario=$HERE/quiet-ads.yaml config=$HERE/quiet-bridge.yaml ;;
            *) echo "run.sh: unknown path $path" >&2; exit 1 ;;
        esac
        echo "== $path ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))"
        out=$(mktemp /tmp/bench-pair-out.XXXXXX)
        BENCH_SIM=$sim "$repo/scripts/bench-pair" --scenario "$scenario" --config "$config" \
            --seconds "$seconds" --rounds "$rounds" "$old" "$new" | tee "$out"
        # Per round: µs of bridge CPU per published message, A (first argument) and B, and (B-A)/A;
        # then the means, and the rounds' spread (max-min of each side over its mean).
        awk -v path="$path" '/^round / {
                r = $2; s = $3; sub(":", "", s); v = $(NF - 13) + 0; m = $4 + 0
                us[r, s] = v; msg[r, s] = m; if (r > nr) nr = r
            }
            END {
                printf "%s: round | A us/msg | B us/msg | (B-A)/A | A msg/s | B msg/s\n", path
                for (r = 1; r <= nr; r++) {
                    a = us[r, "a"]; b = us[r, "b"]; sa += a; sb += b
                    if (r == 1 || a < mina) mina = a; if (r == 1 || a > maxa) maxa = a
                    if (r == 1 || b < minb) minb = b; if (r == 1 || b > maxb) maxb = b
                    d = 100 * (b - a) / a; if (r == 1 || d < mind) mind = d; if (r == 1 || d > maxd) maxd = d
                    for (i = r - 1; i >= 1 && ds[i] > d; i--) ds[i + 1] = ds[i]; ds[i + 1] = d
                    printf "%s: %d | %.1f | %.1f | %+.1f %% | %d | %d\n", path, r, a, b, d, msg[r, "a"], msg[r, "b"]
                }
                ma = sa / nr; mb = sb / nr
                med = (nr % 2) ? ds[(nr + 1) / 2] : (ds[nr / 2] + ds[nr / 2 + 1]) / 2
                printf "%s: mean | %.1f | %.1f | %+.1f %% (median of the rounds %+.1f %%)\n", path, ma, mb, 100 * (mb - ma) / ma, med
                printf "%s: per-round (B-A)/A %+.1f…%+.1f %%; round-to-round spread A %.0f %%, B %.0f %% of the mean\n",
                    path, mind, maxd, 100 * (maxa - mina) / ma, 100 * (maxb - minb) / mb
            }' "$out"
        rm -f "$out"
    done
    echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%H:%M:%S) UTC)"
} 2>&1 | tee "$log"
