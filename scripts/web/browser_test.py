#!/usr/bin/env python3
"""The page (ble-mqtt-bridge-web) in headless Chromium, through Selenium: scripts/check-web runs it
against the demo scene it starts (bluez-sim + mosquitto + the bridge + the page's server).

    browser_test.py --url http://127.0.0.1:PORT --sim-dir DIR --artifacts DIR [--mqtt-port N]

Elements are found by their data-testid (the page's ids: the WEB side's list). Each check prints
"check-web: <what>: OK" or "check-web: <what>: FAIL: <why>"; a failed check does not stop the
others. Exit status 0 only when every check passed.
"""
import argparse
import json
import os
import random
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = "ble"
ECHO_ADDRESS = "D0:5A:00:00:EC:01"
ECHO_WRITE_UUID = "5e1f0002-b5a3-4c1d-9e0a-ec40ec40ec40"
THERMOMETER = "A4:C1:38:31:00:0A"          # scripts/web/scene.yaml: pvvx, not in bridge.yaml
THERMOMETER_SEGMENT = "web_thermometer"
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_VALUE = "</script><script>alert(2)</script><b>bold</b>"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

failures = []


def ok(what):
    print(f"check-web: {what}: OK", flush=True)


def fail(what, why):
    failures.append(what)
    print(f"check-web: {what}: FAIL: {why}", flush=True)


def tid(name, **attributes):
    """A CSS selector for data-testid NAME with the given data-* attributes."""
    selector = f'[data-testid="{name}"]'
    for key, value in attributes.items():
        selector += f'[data-{key.replace("_", "-")}="{value}"]'
    return selector


class Page:
    def __init__(self, url, artifacts):
        self.url = url
        self.artifacts = artifacts
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1280,900", "--disable-extensions", "--no-first-run"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"),
                          log_output=os.path.join(artifacts, "chromedriver.log"))
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(30)
        self.console = []

    def quit(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass

    def wait(self, condition, seconds, message):
        """Waits until condition(driver) is truthy; returns its value, or raises TimeoutException(message)."""
        return WebDriverWait(self.driver, seconds, poll_frequency=0.1,
                             ignored_exceptions=(WebDriverException,)).until(condition, message)

    def find(self, selector, seconds=10):
        return self.wait(lambda d: d.find_element(By.CSS_SELECTOR, selector), seconds,
                         f"no element {selector} within {seconds} s")

    def present(self, selector):
        return len(self.driver.find_elements(By.CSS_SELECTOR, selector)) > 0

    def text(self, selector):
        elements = self.driver.find_elements(By.CSS_SELECTOR, selector)
        return elements[0].text if elements else None

    def route(self, hash_route, view):
        """Goes to a hash route inside the loaded page (no reload) and waits for its view."""
        self.driver.execute_script("window.location.hash = arguments[0];", hash_route)
        self.find(f'{tid("view")}[data-view="{view}"]', 10)

    def screenshot(self, name):
        path = os.path.join(self.artifacts, f"{name}.png")
        self.driver.save_screenshot(path)
        return path

    def collect_console(self):
        """The browser console's entries since the last call (kept in self.console)."""
        entries = self.driver.get_log("browser")
        self.console.extend(entries)
        return entries

    def assert_no_alert(self, what):
        try:
            alert = self.driver.switch_to.alert
            text = alert.text
            alert.dismiss()
            fail(what, f"an alert dialog opened: {text!r}")
            return False
        except NoAlertPresentException:
            return True

    def injected_elements(self):
        """Elements that hostile text would make if it were parsed as HTML."""
        return self.driver.execute_script("""
            const found = [];
            for (const e of document.querySelectorAll('img')) {
                const src = e.getAttribute('src') || '';
                if (src === 'x' || e.hasAttribute('onerror')) found.push(e.outerHTML);
            }
            for (const e of document.querySelectorAll('[onerror], [onload]')) found.push(e.outerHTML);
            for (const e of document.querySelectorAll('b')) if (e.textContent === 'bold') found.push(e.outerHTML);
            for (const e of document.querySelectorAll('script')) {
                const src = e.getAttribute('src');
                if (!src || !src.startsWith('/assets/')) found.push('script: ' + e.outerHTML.slice(0, 80));
            }
            return found;""")


def http_get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, dict(response.headers.items()), response.read()


def check_headers(url):
    what = "(d) security headers"
    try:
        paths = ["/", "/assets/app.js", "/assets/app.css", "/api/snapshot"]
        for path in paths:
            status, headers, _ = http_get(url + path)
            lowered = {k.lower(): v for k, v in headers.items()}
            if status != 200:
                return fail(what, f"GET {path}: HTTP {status}")
            csp = lowered.get("content-security-policy")
            if csp != CSP:
                return fail(what, f"GET {path}: Content-Security-Policy is {csp!r}, want {CSP!r}")
            if lowered.get("x-content-type-options") != "nosniff":
                return fail(what, f"GET {path}: X-Content-Type-Options is {lowered.get('x-content-type-options')!r}")
            if lowered.get("referrer-policy") != "no-referrer":
                return fail(what, f"GET {path}: Referrer-Policy is {lowered.get('referrer-policy')!r}")
        ok(f"{what} on {', '.join(paths)}")
    except Exception as error:  # noqa: BLE001 - any failure of the request is the check's failure
        fail(what, f"{type(error).__name__}: {error}")


def check_devices(page):
    """(a) the demo devices are listed and their values change without a reload."""
    what = "(a) Devices lists the demo devices"
    page.route("#/devices", "devices")
    try:
        for device in ("polar_h10", "env_sensor", "echo", "hostile"):
            page.find(tid("device-row", device=device), 30)
        ok(what)
    except TimeoutException as error:
        rows = [e.get_attribute("data-device") for e in page.driver.find_elements(By.CSS_SELECTOR, tid("device-row"))]
        return fail(what, f"{error.msg}; rows: {rows}")
    what = "(a) values change without a reload"
    page.driver.execute_script("window.__checkWebNoReload = 'same document';")
    for topic in (f"{BASE}/env_sensor/environment/temperature", f"{BASE}/polar_h10/180d/heart_rate"):
        selector = f'{tid("device-row", device=topic.split("/")[1])} {tid("value", topic=topic)}'
        try:
            first = page.wait(lambda d: (d.find_element(By.CSS_SELECTOR, selector).text or None), 30,
                              f"no value shown for {topic} within 30 s")
            time.sleep(1.5)  # the sensors notify at 1 Hz: the second reading is a later one
            second = page.wait(lambda d: (lambda t: t if t != first else None)(
                d.find_element(By.CSS_SELECTOR, selector).text), 15,
                f"{topic}: the value stayed {first!r} for 15 s (no live update)")
        except TimeoutException as error:
            return fail(what, error.msg)
        marker = page.driver.execute_script("return window.__checkWebNoReload || null;")
        if marker != "same document":
            return fail(what, "the page was reloaded (the marker set in the document is gone)")
        ok(f"{what}: {topic}: {first!r} -> {second!r}")
    page.screenshot("devices")


def check_echo_write(page, sim_dir):
    """(b) a write on the echo device's page reaches the peripheral and its result is shown."""
    what = "(b) write on the echo device's page"
    page.route("#/device/echo", "device")
    hexvalue = "c0ffee%06x" % random.randrange(1 << 24)
    row = tid("char-row", service="custom", characteristic="write")
    try:
        page.find(f'{tid("device-view", device="echo")} {row}', 30)
        field = page.find(f"{row} {tid('write-input')}")
        Select(page.find(f"{row} {tid('write-format')}")).select_by_value("hex")
        field.clear()
        field.send_keys(hexvalue)
        page.find(f"{row} {tid('write-button')}").click()
        result = page.wait(lambda d: (lambda e: e if e.get_attribute("data-status") in ("ok", "error") else None)(
            d.find_element(By.CSS_SELECTOR, f"{row} {tid('result')}")), 20,
            "no result shown for the write within 20 s")
        if result.get_attribute("data-status") != "ok" or result.text.strip() != "ok":
            return fail(what, f"the result shown is {result.text!r} (data-status {result.get_attribute('data-status')})")
        ok(f"{what}: result 'ok' shown")
    except TimeoutException as error:
        return fail(what, error.msg)
    # The peripheral took it: bluez-sim's write log has the bytes.
    log = os.path.join(sim_dir, "writes.log")
    wanted = f"{ECHO_ADDRESS} {ECHO_WRITE_UUID} request 0 {hexvalue}"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(log, encoding="utf-8", errors="replace") as f:
            if any(wanted in line for line in f):
                break
        time.sleep(0.1)
    else:
        return fail(what, f"bluez-sim's write log ({log}) has no line with '{wanted}'")
    ok(f"{what}: the peripheral received {hexvalue}")
    # The echo comes back as a notification, shown live on the notify row.
    notify = f'{tid("char-row", service="custom", characteristic="notify")} {tid("value")}'
    try:
        page.wait(lambda d: hexvalue in d.find_element(By.CSS_SELECTOR, notify).text.lower(), 15,
                  f"the notify row does not show {hexvalue} within 15 s")
        ok(f"{what}: the echoed notification {hexvalue} is shown")
    except TimeoutException as error:
        fail(what, error.msg)
    page.screenshot("device-echo")


def check_hostile_device(page):
    """(d) the hostile device's value (and name, where shown) is text."""
    what = "(d) hostile value shown as text"
    page.route("#/device/hostile", "device")
    selector = f'{tid("char-row", service="custom", characteristic="text")} {tid("value")}'
    try:
        page.wait(lambda d: HOSTILE_VALUE in d.find_element(By.CSS_SELECTOR, selector).text, 30,
                  f"the value {HOSTILE_VALUE!r} is not shown literally within 30 s")
        ok(what)
    except TimeoutException as error:
        shown = page.text(selector)
        fail(what, f"{error.msg}; shown: {shown!r}")
    check_not_injected(page, "device page of hostile")
    page.screenshot("device-hostile")


def check_not_injected(page, where):
    what = f"(d) nothing injected ({where})"
    if not page.assert_no_alert(what):
        return
    found = page.injected_elements()
    if found:
        return fail(what, f"elements made from data: {found}")
    ok(what)


def check_nearby(page, state_dir):
    """(c) scan, the hostile name as text, add the thermometer, its values on Devices."""
    what = "(c) Nearby scan"
    page.route("#/nearby", "nearby")
    try:
        seconds = page.find(tid("scan-seconds"))
        seconds.clear()
        seconds.send_keys("5")
        page.find(tid("scan-button")).click()
        status = page.wait(lambda d: (lambda e: e if e.get_attribute("data-status") in ("ok", "error") else None)(
            d.find_element(By.CSS_SELECTOR, tid("scan-status"))), 40,
            "the scan did not end within 40 s (scan-status stays idle/scanning)")
        if status.get_attribute("data-status") != "ok":
            return fail(what, f"the scan failed: {status.text!r}. The page sends the bridge's `scan` request "
                        "(SPEC §14, {base}/bridge/request/scan): does this bridge answer it?")
        page.find(tid("nearby-row", address=THERMOMETER), 10)
        ok(f"{what}: {THERMOMETER} found")
    except TimeoutException as error:
        rows = [e.get_attribute("data-address") for e in page.driver.find_elements(By.CSS_SELECTOR, tid("nearby-row"))]
        return fail(what, f"{error.msg}; rows: {rows}")

    hostile_what = "(d) hostile name shown as text"
    name = page.text(f'{tid("nearby-row", address="C0:FF:EE:00:31:66")} {tid("nearby-name")}')
    if name == HOSTILE_NAME:
        ok(f"{hostile_what} (Nearby)")
    else:
        fail(hostile_what, f"Nearby's name cell of C0:FF:EE:00:31:66 shows {name!r}, want {HOSTILE_NAME!r}")
    check_not_injected(page, "Nearby")
    page.screenshot("nearby")

    what = "(c) add the thermometer from Nearby"
    row = tid("nearby-row", address=THERMOMETER)
    try:
        page.find(f"{row} {tid('add-open')}").click()
        page.find(tid("add-form"))
        address = page.find(tid("add-address")).get_attribute("value")
        if (address or "").upper() != THERMOMETER:
            return fail(what, f"the add form's address is {address!r}, want {THERMOMETER}")
        name_field = page.find(tid("add-name"))
        name_field.clear()
        name_field.send_keys(THERMOMETER_SEGMENT)
        Select(page.find(tid("add-connection"))).select_by_value("advertisement")
        page.find(tid("add-button")).click()
        result = page.wait(lambda d: (lambda e: e if e.get_attribute("data-status") in ("ok", "error") else None)(
            d.find_element(By.CSS_SELECTOR, tid("add-result"))), 20, "no add result within 20 s")
        if result.get_attribute("data-status") != "ok" or result.text.strip() != f"ok: {THERMOMETER_SEGMENT}":
            return fail(what, f"the add result is {result.text!r}, want 'ok: {THERMOMETER_SEGMENT}' "
                        "(the bridge's device/add request, SPEC §14)")
        ok(f"{what}: {result.text.strip()!r}")
    except TimeoutException as error:
        return fail(what, error.msg)

    what = "(c) the added thermometer's values on Devices"
    page.route("#/devices", "devices")
    values = f'{tid("device-row", device=THERMOMETER_SEGMENT)} {tid("value")}'
    try:
        page.wait(lambda d: any(e.text.strip() for e in d.find_elements(By.CSS_SELECTOR, values)), 30,
                  f"no value shown for {THERMOMETER_SEGMENT} on Devices within 30 s")
        shown = [e.text for e in page.driver.find_elements(By.CSS_SELECTOR, values)]
        if not any("temperature" in text for text in shown):
            return fail(what, f"no temperature among the values shown: {shown}")
        ok(f"{what}: {shown}")
    except TimeoutException as error:
        return fail(what, error.msg)
    devices_file = os.path.join(state_dir, "devices.json")
    try:
        with open(devices_file, encoding="utf-8") as f:
            kept = f.read()
        if THERMOMETER_SEGMENT in kept:
            ok(f"(c) the bridge keeps it in its devices_file ({devices_file})")
        else:
            fail("(c) devices_file", f"{devices_file} does not name {THERMOMETER_SEGMENT}: {kept[:300]}")
    except OSError as error:
        fail("(c) devices_file", f"cannot read {devices_file}: {error}")
    page.screenshot("devices-added")


def check_radios_presence(page):
    what = "(e) Radios"
    page.route("#/radios", "radios")
    try:
        page.wait(lambda d: any(e.text.strip() == "online" for e in d.find_elements(
            By.CSS_SELECTOR, f'{tid("bridge-row")} {tid("bridge-state")}')), 20,
            "no bridge-row with bridge-state 'online' within 20 s")
        ok(what)
    except TimeoutException as error:
        fail(what, error.msg)
    check_not_injected(page, "Radios")
    page.screenshot("radios")
    what = "(e) Presence"
    page.route("#/presence", "presence")
    try:
        page.wait(lambda d: d.find_element(By.CSS_SELECTOR,
                  f'{tid("presence-row", tracker="alice_phone")} {tid("presence-state")}').text == "home", 30,
                  "alice_phone is not shown 'home' within 30 s")
        ok(what)
    except TimeoutException as error:
        fail(what, error.msg)
    page.screenshot("presence")


def check_console(page):
    what = "(d) browser console has no error"
    page.collect_console()
    # The browser asks for /favicon.ico by itself; a 404 for it says nothing about the page's data.
    severe = [e for e in page.console if e.get("level") == "SEVERE"]
    errors = [e for e in severe if "favicon.ico" not in e.get("message", "")]
    with open(os.path.join(page.artifacts, "console.log"), "w", encoding="utf-8") as f:
        for entry in page.console:
            f.write(json.dumps(entry) + "\n")
    if errors:
        return fail(what, "; ".join(e.get("message", "")[:200] for e in errors[:5]))
    ignored = f", {len(severe)} for /favicon.ico ignored" if severe else ""
    ok(f"{what} ({len(page.console)} entries, no error{ignored})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--sim-dir", required=True, help="start-sim's directory (writes.log)")
    parser.add_argument("--state-dir", help="the bridge's state_file directory (default SIM_DIR/state)")
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--mqtt-port", type=int)
    parser.add_argument("--bridge-pid", type=int)
    parser.add_argument("--web-pid", type=int)
    args = parser.parse_args()
    url = args.url.rstrip("/")
    state_dir = args.state_dir or os.path.join(args.sim_dir, "state")

    check_headers(url)
    page = Page(url, args.artifacts)
    try:
        page.driver.get(url + "/#/devices")
        try:
            page.find(f'{tid("live")}[data-state="live"]', 20)
            ok("the page loads and its live stream is open")
        except TimeoutException:
            fail("the page loads", f"the live indicator is {page.text(tid('live'))!r}, not live, after 20 s")
        checks = [
            ("(a) Devices", lambda: check_devices(page)),
            ("(b) echo write", lambda: check_echo_write(page, args.sim_dir)),
            ("(d) hostile device", lambda: check_hostile_device(page)),
            ("(c) Nearby", lambda: check_nearby(page, state_dir)),
            ("(e) Radios, Presence", lambda: check_radios_presence(page)),
            ("(d) end", lambda: check_not_injected(page, "end")),
            ("(d) console", lambda: check_console(page)),
        ]
        for name, check in checks:
            # A check that cannot even reach its page fails alone; the others still run.
            try:
                check()
            except WebDriverException as error:
                fail(name, f"{type(error).__name__}: {getattr(error, 'msg', None) or error}")
                try:
                    page.screenshot("failure-" + "".join(c if c.isalnum() else "-" for c in name))
                except WebDriverException:
                    pass
    finally:
        page.quit()
    if failures:
        print(f"check-web: {len(failures)} check(s) failed: {', '.join(failures)}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
