# Shared shell helpers of scripts/demo, scripts/test and scripts/bench-demo.
#
#   . "$(dirname "$0")/lib/common.sh"
#
# Defines (all names prefixed with nothing fancy; every helper documents its arguments):
#   ROOT                         the package root
#   say MESSAGE / warn MESSAGE / die MESSAGE
#   note MESSAGE                 a check that was not made: prints "$me: NOTE: MESSAGE" and, under
#                                scripts/test, appends MESSAGE to $STEP_NOTES (the step's summary
#                                row then says NOTE instead of PASS, and lists it)
#   ensure_swift                 fails with a hint when `swift` is not on PATH
#   ensure_packages PKG...       apt-get installs the packages that are missing
#                                (apt-get update once first; as root, else through sudo)
#   free_port                    prints a TCP port on 127.0.0.1 that is free right now
#   wait_port PORT [SECONDS]     waits until something accepts connections on 127.0.0.1:PORT
#   start_mosquitto DIR PORT     starts a broker on 127.0.0.1:PORT (log: DIR/mosquitto.log,
#                                pid: DIR/mosquitto.pid) and waits until it accepts connections
#   wait_subscribed DIR CLIENT_ID TOPIC [SECONDS]
#                                waits until the broker's log shows CLIENT_ID subscribed to TOPIC
#   start_sim DIR [SCENARIO] [bluez-sim options...]
#                                private dbus-daemon + bluez-sim (scripts/sim/start-sim); exports
#                                DBUS_SYSTEM_BUS_ADDRESS
#   stop_pid PID [SECONDS]       SIGTERM, then SIGKILL after SECONDS (default 5); reaps own children
#   stop_pidfile FILE [SECONDS]  stop_pid on the pid in FILE, then removes FILE
#   stop_sim DIR                 stops bluez-sim and dbus-daemon (scripts/sim/stop)
#   DETACH                       (array) `setsid` when available: prefix of background commands
#   SWIFT_FLAGS                  (array) --scratch-path $SWIFT_SCRATCH_PATH when that is set, for
#                                every `swift build` / `swift test` of the scripts

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Prefix for background processes: a new session, so that Ctrl-C in the terminal (SIGINT to the
# foreground process group) reaches only the script, whose trap then stops them in order.
# (A background child of a script is not a process group leader, so setsid execs in place and $!
# stays the process's pid.)
DETACH=()
if command -v setsid >/dev/null 2>&1; then DETACH=(setsid); fi

SWIFT_FLAGS=()
if [ -n "${SWIFT_SCRATCH_PATH:-}" ]; then SWIFT_FLAGS=(--scratch-path "$SWIFT_SCRATCH_PATH"); fi

say() { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }
die() { printf '%s\n' "$*" >&2; exit 1; }
note() {
    say "${me:-$(basename "$0")}: NOTE: $*"
    if [ -n "${STEP_NOTES:-}" ]; then printf '%s\n' "$*" >>"$STEP_NOTES"; fi
}

ensure_swift() {
    command -v swift >/dev/null 2>&1 && return 0
    die "swift is not on PATH: install a Swift 6 toolchain (https://www.swift.org/install/linux/) and add its usr/bin to PATH"
}

# Whether the Debian package $1 is installed.
package_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

ensure_packages() {
    local missing=() pkg
    if ! command -v dpkg-query >/dev/null 2>&1; then
        warn "no dpkg-query: not a Debian system, assuming these are installed: $*"
        return 0
    fi
    for pkg in "$@"; do
        package_installed "$pkg" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "missing packages: ${missing[*]} (run as root, or install sudo, or: apt-get install ${missing[*]})"
        sudo=(sudo)
    fi
    say "installing missing packages: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
        || die "apt-get update failed"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        || die "apt-get install ${missing[*]} failed"
}

# Whether something accepts TCP connections on 127.0.0.1:$1.
port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A port below the kernel's ephemeral range (32768-60999), so that no outgoing connection takes
# it between this check and the broker's bind.
free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$((20000 + RANDOM % 12768))
        if command -v python3 >/dev/null 2>&1; then
            python3 -c 'import socket, sys; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' "$port" \
                2>/dev/null && { echo "$port"; return 0; }
        elif ! port_open "$port"; then
            echo "$port"
            return 0
        fi
    done
    die "free_port: no free port found"
}

wait_port() {
    local port=$1 seconds=${2:-10} i
    for ((i = 0; i < seconds * 20; i++)); do
        port_open "$port" && return 0
        sleep 0.05
    done
    return 1
}

mosquitto_binary() {
    command -v mosquitto 2>/dev/null || { [ -x /usr/sbin/mosquitto ] && echo /usr/sbin/mosquitto; } || die "mosquitto is not installed"
}

start_mosquitto() {
    local dir=$1 port=$2 binary pid
    binary=$(mosquitto_binary)
    cat >"$dir/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
log_dest stderr
log_timestamp true
log_type error
log_type warning
log_type notice
log_type information
log_type subscribe
connection_messages true
CONF
    "${DETACH[@]}" "$binary" -c "$dir/mosquitto.conf" </dev/null >/dev/null 2>"$dir/mosquitto.log" &
    pid=$!
    echo "$pid" >"$dir/mosquitto.pid"
    for _ in $(seq 1 200); do
        port_open "$port" && return 0
        kill -0 "$pid" 2>/dev/null || { cat "$dir/mosquitto.log" >&2; die "mosquitto exited"; }
        sleep 0.05
    done
    die "mosquitto does not accept connections on 127.0.0.1:$port after 10 s"
}

wait_subscribed() {
    local dir=$1 client=$2 topic=$3 seconds=${4:-10} i
    for ((i = 0; i < seconds * 20; i++)); do
        # mosquitto logs a subscription as "<time>: <client id> <qos> <topic filter>".
        awk -v c="$client" -v t="$topic" '$2 == c && $4 == t { found = 1 } END { exit !found }' \
            "$dir/mosquitto.log" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

start_sim() {
    local dir=$1
    shift
    DBUS_SYSTEM_BUS_ADDRESS=$("${DETACH[@]}" "$ROOT/scripts/sim/start-sim" "$dir" "$@") || return 1
    export DBUS_SYSTEM_BUS_ADDRESS
}

# Whether process $1 exists and is not a zombie.
pid_alive() {
    local state
    [ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 1
    state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

stop_pid() {
    local pid=$1 seconds=${2:-5} i
    [ -n "$pid" ] || return 0
    if pid_alive "$pid"; then
        kill -TERM "$pid" 2>/dev/null
        for ((i = 0; i < seconds * 20; i++)); do
            pid_alive "$pid" || break
            sleep 0.05
        done
        pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null || true
    return 0
}

stop_pidfile() {
    local file=$1
    [ -f "$file" ] || return 0
    stop_pid "$(cat "$file")" "${2:-5}"
    rm -f "$file"
}

stop_sim() {
    "$ROOT/scripts/sim/stop" "$1" >/dev/null 2>&1 || true
}
