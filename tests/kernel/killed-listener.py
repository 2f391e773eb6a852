#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# killed-listener.py SECONDS - the real-kernel tests' receiver of psi-lmkd's
# Killed signal on the system bus ($DBUS_SYSTEM_BUS_ADDRESS): prints
# "ready" once its match rule is in place, then "killed PID COMM" for each
# signal (COMM as Python's ascii() shows it), and exits after SECONDS.
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
loop = GLib.MainLoop()


def on_killed(_conn, _sender, _path, _iface, _signal, params):
    pid, comm = params.unpack()[:2]
    print("killed", pid, ascii(comm), flush=True)


bus.signal_subscribe(None, "io.github.psi_lmkd.Killer1", "Killed", "/io/github/psi_lmkd/Killer1", None,
                     Gio.DBusSignalFlags.NONE, on_killed)
# a round trip after AddMatch: the bus has the rule before "ready"
bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", None, None,
              Gio.DBusCallFlags.NONE, -1, None)
print("ready", flush=True)
GLib.timeout_add_seconds(int(sys.argv[1]), loop.quit)
loop.run()
