# SPDX-License-Identifier: MIT
# notifyd.py - a stand-in org.freedesktop.Notifications server on the session
# bus for the kernel tests: prints "ready", then one "notify app=... urgency=...
# summary=... body=..." line per Notify call (test-warn-dbus.sh, test-warn-agent.sh).
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
XML = """<node><interface name="org.freedesktop.Notifications"><method name="Notify">
<arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
<arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
<arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
</method></interface></node>"""
def call(conn, sender, path, iface, method, params, inv):
    app, _id, _icon, summary, body, _a, hints, _t = params.unpack()
    print("notify app=%s urgency=%s summary=%s body=%s" % (app, hints.get("urgency"), summary, body), flush=True)
    inv.return_value(GLib.Variant("(u)", (1,)))
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
conn.register_object("/org/freedesktop/Notifications", Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0], call, None, None)
conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
               GLib.Variant("(su)", ("org.freedesktop.Notifications", 4)), None, Gio.DBusCallFlags.NONE, -1, None)
print("ready", flush=True)
GLib.MainLoop().run()
