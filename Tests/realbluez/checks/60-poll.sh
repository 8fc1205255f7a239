# shellcheck shell=bash
# SPEC §3 and §6 on the real stack (issue 9):
#   1. no topic of the GAP (1800) or GATT (1801) service was published in the whole run so far
#      (the example peripheral has 1801 with Service Changed, and real BlueZ exports it);
#   2. the peripheral as a `connection: poll` device (poll_interval 8 s): the bridge connects,
#      reads (2A38 body sensor location, read-only, is published once per cycle), disconnects,
#      and repeats: three values, with the link down between them (bridge/devices connected
#      true -> false -> true -> false), availability online between cycles;
#   3. the suite's bridge again (always), online again, for 90-shutdown.
# Runs after 50-recovery and before 90-shutdown.

requires_bridge
# shellcheck source=../lib-extra.sh
. "$RB_TESTS/lib-extra.sh"

RX_POLL_CONFIG=$SUITE/bridge-poll.yaml

no_gatt_internals() {
  "$PY" - "$MQTT_LOG" "$BASE" <<'PYEOF'
import json, sys
log, base = sys.argv[1], sys.argv[2]
bad, n = [], 0
for line in open(log, errors='replace'):
    try:
        message = json.loads(line.split(' ', 1)[1])
        topic = message['topic']
    except Exception:
        continue
    if not topic.startswith(base + '/'):
        continue
    n += 1
    segs = topic.split('/')
    if any(s in ('1800', '1801') or s.startswith('00001800-') or s.startswith('00001801-') for s in segs):
        bad.append(topic)
    # The services of each device (not the whole line: its timestamp may contain "1801").
    if topic == base + '/bridge/devices':
        try:
            services = [s for d in json.loads(message.get('payload') or '[]') for s in d.get('services', [])]
        except Exception:
            services = []
        if any(s in ('1800', '1801') or s.startswith('00001800-') or s.startswith('00001801-') for s in services):
            bad.append(topic + ' lists 1800/1801')
if bad:
    print('GAP/GATT topics published: ' + ', '.join(sorted(set(bad))[:10])); sys.exit(1)
print('%d messages under %s/, none of the GAP or GATT services' % (n, base))
PYEOF
}

poll_cycles() {
  need_bridge || return
  sed "s|^\([[:space:]]*- match: { address: \"$RB_PERIPH_ADDR\" }\)\$|\1\n    connection: poll\n    poll_interval: 8s|" \
    "$BRIDGE_CONFIG" > "$RX_POLL_CONFIG"
  grep -q "connection: poll" "$RX_POLL_CONFIG" || fail "could not derive $RX_POLL_CONFIG from $BRIDGE_CONFIG" || return
  stop_bridge TERM 20 || return
  rx_start_bridge "$RX_POLL_CONFIG" || return
  "$PY" - "$MQTT_LOG" "$BASE" "$DEV" "$RX_START_T0" <<'PYEOF'
import json, sys, time
log, base, dev, t0 = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
value_topic = '%s/%s/180d/2a38' % (base, dev)
deadline = time.time() + 60
while True:
    values, links, avail = [], [], []
    for line in open(log, errors='replace'):
        try:
            ts, rest = line.split(' ', 1)
            ts = float(ts)
            m = json.loads(rest)
        except Exception:
            continue
        if ts < t0:
            continue
        if m['topic'] == value_topic:
            values.append(ts)
        elif m['topic'] == base + '/bridge/devices':
            p = m.get('payload')
            entries = json.loads(p or '[]') if isinstance(p, str) else (p or [])
            for e in entries:
                if e.get('name') == dev:
                    if e.get('connection') != 'poll':
                        print('bridge/devices shows connection %r, not poll' % e.get('connection')); sys.exit(1)
                    if not links or links[-1] != e.get('connected'):
                        links.append(e.get('connected'))
        elif m['topic'] == '%s/%s/availability' % (base, dev):
            avail.append(m.get('payload'))
    downs = sum(1 for a, b in zip(links, links[1:]) if a and not b)
    if len(values) >= 3 and downs >= 2:
        gaps = ['%.1f' % (b - a) for a, b in zip(values, values[1:])]
        if 'online' not in avail or 'offline' in avail[avail.index('online'):]:
            print('availability after the restart: %s' % avail); sys.exit(1)
        print('%d cycles: 2A38 values %s s apart; connected in bridge/devices: %s; availability %s'
              % (len(values), ', '.join(gaps), links, avail))
        sys.exit(0)
    if time.time() > deadline:
        print('after 60 s: %d 2A38 values, connected sequence %s, availability %s' % (len(values), links, avail))
        sys.exit(1)
    time.sleep(0.5)
PYEOF
}

always_again() {
  need_bridge || return
  stop_bridge TERM 20 || return
  rx_start_bridge "$BRIDGE_CONFIG" || return
  rx_wait_online 60
}

check no_gatt_internals no_gatt_internals
check poll_cycles poll_cycles
check always_again always_again
