#!/usr/bin/env python3
"""The page's server under a steady load (scripts/bench-web runs it): DEVICES simulated devices'
value topics published at RATE values/s in total into mosquitto by a small MQTT 3.1.1 publisher
(plain sockets, QoS 0), one server-sent-events client on /api/events and, optionally, headless
Chromium on the Devices page. Each value's JSON `value` is its publish time (Unix ms, float), so
that the SSE client and the page (a MutationObserver on the value cells) each compute the delay
from the publish to themselves.

    bench_web.py --url http://127.0.0.1:PORT --mqtt-port N --web-pid PID [--devices 100] [--rate 20]
                 [--seconds 60] [--browser] [--venv-python PATH]

Prints: the server's VmRSS and VmHWM at the start and after SECONDS, the SSE delay p50/p90/p99/max
over the values received, the page's delay likewise (with --browser), and the asset weight.
"""
import argparse
import json
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
import urllib.request


def encode_length(n):
    out = bytearray()
    while True:
        byte = n % 128
        n //= 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def mqtt_string(s):
    data = s.encode()
    return struct.pack("!H", len(data)) + data


class Publisher:
    """A minimal MQTT 3.1.1 client: CONNECT, PUBLISH (QoS 0, retain optional), PINGREQ."""

    def __init__(self, port, client_id):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        variable = mqtt_string("MQTT") + bytes([4, 0x02]) + struct.pack("!H", 60)
        payload = mqtt_string(client_id)
        body = variable + payload
        self.sock.sendall(bytes([0x10]) + encode_length(len(body)) + body)
        ack = self.sock.recv(4)
        if len(ack) < 4 or ack[0] != 0x20 or ack[3] != 0:
            raise RuntimeError(f"CONNACK refused: {ack!r}")

    def publish(self, topic, payload, retain=False):
        body = mqtt_string(topic) + payload.encode()
        self.sock.sendall(bytes([0x30 | (1 if retain else 0)]) + encode_length(len(body)) + body)

    def ping(self):
        self.sock.sendall(bytes([0xC0, 0]))

    def close(self):
        self.sock.sendall(bytes([0xE0, 0]))
        self.sock.close()


def memory(pid):
    figures = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                figures[key] = int(value.split()[0])
    return figures


def percentiles(values):
    if not values:
        return "no values"
    ordered = sorted(values)

    def at(p):
        return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]
    return (f"n={len(ordered)} p50={at(50):.1f} ms p90={at(90):.1f} ms p99={at(99):.1f} ms "
            f"max={ordered[-1]:.1f} ms mean={statistics.fmean(ordered):.1f} ms")


class SSEClient(threading.Thread):
    def __init__(self, url, topic_prefix):
        super().__init__(daemon=True)
        self.url = url
        self.prefix = topic_prefix
        self.delays = []
        self.events = 0
        self.error = None
        self.stop = False

    def run(self):
        try:
            request = urllib.request.Request(self.url + "/api/events", headers={"Accept": "text/event-stream"})
            with urllib.request.urlopen(request, timeout=30) as response:
                for raw in response:
                    if self.stop:
                        return
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if not line.startswith("data:"):
                        continue
                    received = time.time() * 1000
                    self.events += 1
                    try:
                        message = json.loads(line[5:].strip())
                        if not message.get("topic", "").startswith(self.prefix):
                            continue
                        sent = json.loads(message["payload"])["value"]
                        self.delays.append(received - float(sent))
                    except (ValueError, KeyError, TypeError):
                        continue
        except Exception as error:  # noqa: BLE001 - reported by the caller
            self.error = error


OBSERVER = r"""
window.__benchDelays = [];
const pattern = /: (\d{13}(?:\.\d+)?)$/;
new MutationObserver(records => {
  const now = performance.timeOrigin + performance.now();
  for (const r of records) {
    const node = r.type === 'characterData' ? r.target.parentElement : r.target;
    const cell = node && node.closest ? node.closest('[data-testid="value"]') : null;
    if (!cell) continue;
    const m = pattern.exec(cell.textContent);
    if (m) window.__benchDelays.push(now - parseFloat(m[1]));
  }
}).observe(document.body, {subtree: true, childList: true, characterData: true});
"""


def browser_session(url, artifacts):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(executable_path="/usr/bin/chromedriver"))
    driver.get(url + "/#/devices")
    time.sleep(2)
    driver.execute_script(OBSERVER)
    return driver


def asset_weight(url):
    with urllib.request.urlopen(url + "/", timeout=10) as response:
        html = response.read()
    total = len(html)
    parts = [f"/ {len(html)} B"]
    for path in sorted(set(re.findall(rb'(?:src|href)="(/assets/[^"]+)"', html))):
        with urllib.request.urlopen(url + path.decode(), timeout=10) as response:
            size = len(response.read())
        total += size
        parts.append(f"{path.decode()} {size} B")
    return total, parts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--mqtt-port", type=int, required=True)
    parser.add_argument("--web-pid", type=int, required=True)
    parser.add_argument("--devices", type=int, default=100)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args()
    url = args.url.rstrip("/")
    base = "ble"

    publisher = Publisher(args.mqtt_port, "bench-web-publisher")
    # What the bridge would have retained: its state, the device list, each device online.
    devices = [f"bench{i:03d}" for i in range(args.devices)]
    publisher.publish(f"{base}/bridge/state", "online", retain=True)
    listing = [{"name": f"Bench {i}", "address": f"F0:00:00:00:{i // 256:02X}:{i % 256:02X}", "address_type": "random",
                "connected": True, "rssi": -60, "services": ["181a"], "connection": "always", "available": True,
                "adapter": "hci0", "paired": False, "bonded": False} for i in range(args.devices)]
    publisher.publish(f"{base}/bridge/devices", json.dumps(listing), retain=True)
    for device in devices:
        publisher.publish(f"{base}/{device}/availability", "online", retain=True)
    topics = [f"{base}/{d}/environment/{c}" for d in devices for c in ("temperature", "humidity")]
    for topic in topics:
        publisher.publish(topic, json.dumps({"raw": "00", "value": time.time() * 1000}), retain=True)

    time.sleep(1.0)
    start_memory = memory(args.web_pid)
    sse = SSEClient(url, f"{base}/bench")
    sse.start()
    driver = None
    if args.browser:
        driver = browser_session(url, None)
    time.sleep(1.0)
    after_clients = memory(args.web_pid)

    period = 1.0 / args.rate
    started = time.monotonic()
    sent = 0
    next_ping = started + 20
    while time.monotonic() - started < args.seconds:
        target = started + sent * period
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        topic = topics[sent % len(topics)]
        publisher.publish(topic, json.dumps({"raw": "00", "value": round(time.time() * 1000, 3)}))
        sent += 1
        if time.monotonic() > next_ping:
            publisher.ping()
            next_ping += 20
    time.sleep(1.0)
    end_memory = memory(args.web_pid)
    cpu = open(f"/proc/{args.web_pid}/stat").read().rsplit(")", 1)[1].split()
    cpu_seconds = (int(cpu[11]) + int(cpu[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    page_delays = []
    if driver is not None:
        page_delays = driver.execute_script("return window.__benchDelays;") or []
        driver.quit()
    sse.stop = True
    publisher.close()

    total, parts = asset_weight(url)
    print(f"bench-web: {args.devices} devices, {len(topics)} value topics, {sent} values published at "
          f"{args.rate:g}/s over {args.seconds:g} s; clients: 1 SSE{' + Chromium (Devices page)' if driver else ''}")
    print(f"bench-web: server memory before clients: VmRSS {start_memory['VmRSS']} kB, VmHWM {start_memory['VmHWM']} kB")
    print(f"bench-web: server memory with clients:   VmRSS {after_clients['VmRSS']} kB, VmHWM {after_clients['VmHWM']} kB")
    print(f"bench-web: server memory after {args.seconds:g} s:       VmRSS {end_memory['VmRSS']} kB, VmHWM {end_memory['VmHWM']} kB")
    print(f"bench-web: server CPU since its start: {cpu_seconds:.2f} s")
    if sse.error:
        print(f"bench-web: SSE client error: {sse.error}")
    print(f"bench-web: SSE delay publish -> client: {percentiles(sse.delays)} ({sse.events} events)")
    if driver is not None:
        print(f"bench-web: page delay publish -> DOM:    {percentiles(page_delays)}")
    print(f"bench-web: asset weight: {total} B ({', '.join(parts)})")
    return 0 if len(sse.delays) >= min(1000, sent) * 0.99 else 1


if __name__ == "__main__":
    sys.exit(main())
