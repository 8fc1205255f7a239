"""Shared pieces of bluez-sim's self-tests (selftest*.py): BlueZ names, one line per check, a GLib
main loop that runs while waiting, and D-Bus errors as (name, message).

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from simtest import *   # noqa: F401,F403
"""
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)

B = 'org.bluez'
OM = 'org.freedesktop.DBus.ObjectManager'
PROPS = 'org.freedesktop.DBus.Properties'
ADAPTER, DEV, CHRC, DESC, SVC, BATT = ('org.bluez.Adapter1', 'org.bluez.Device1', 'org.bluez.GattCharacteristic1',
                                       'org.bluez.GattDescriptor1', 'org.bluez.GattService1', 'org.bluez.Battery1')

failures = []


def u16(x):
    """The 128-bit form of a 16-bit UUID given as hex text."""
    return '0000%s-0000-1000-8000-00805f9b34fb' % x


def check(name, ok, detail=''):
    """Prints `ok NAME DETAIL` or `FAIL NAME DETAIL` and remembers failures."""
    print('%-4s %s %s' % ('ok' if ok else 'FAIL', name, detail), flush=True)
    if not ok:
        failures.append(name)


def spin(pred, timeout):
    """Runs the GLib main loop until pred() holds or timeout seconds passed; returns pred()."""
    ctx = GLib.MainContext.default()
    end = time.time() + timeout
    while not pred() and time.time() < end:
        if not ctx.iteration(False):
            time.sleep(0.005)
    return pred()


def pause(seconds):
    """Runs the main loop for this long."""
    spin(lambda: False, seconds)


def error_of(fn):
    """Calls fn; None when it succeeds, else the D-Bus error as (name, message)."""
    try:
        fn()
        return None
    except dbus.exceptions.DBusException as e:
        return (e.get_dbus_name(), e.get_dbus_message())
