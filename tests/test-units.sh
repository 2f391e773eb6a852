#!/bin/sh
# SPDX-License-Identifier: MIT
# test-units: the service files that `make install` installs.
#  - @placeholders@ are all filled in, ExecStart/command point at $SBINDIR;
#  - the systemd unit's CapabilityBoundingSet= is exactly the list the daemon
#    keeps (src/base/caps.c), the Android rc's the same but CAP_SYS_PTRACE (the
#    readproc group sees every /proc/PID there; tests/test-android.sh
#    checks the rc against lmkd's);
#  - the OpenRC script parses (sh -n);
#  - `systemd-analyze verify` accepts the unit without a single message
#    (ExecStart pointed at the freshly built binary, which must exist for it).
# Exit: 0 pass, 1 fail, 77 systemd-analyze missing (everything else passed).
set -u
top=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
unit=$build/init/psi-lmkd.service
openrc=$build/init/openrc/psi-lmkd
rc=$top/init/psi-lmkd.rc
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

bad() { echo "FAIL: $*" >&2; fail=1; }
note() { echo "# $*" >&2; }
words() { tr '\n' ' ' <"$1"; }

for f in "$unit" "$openrc" "$rc"; do
	[ -f "$f" ] || { bad "$f is missing (make check builds init/ first)"; exit 1; }
done

# ---------------------------------------------------------------- substitution
for f in "$unit" "$openrc"; do
	if grep -nE '@[A-Za-z_]+@' "$f" >&2; then
		bad "${f#"$build"/}: placeholders left"
	fi
done
if [ -n "${SBINDIR:-}" ]; then
	grep -qx "ExecStart=$SBINDIR/psi-lmkd -f" "$unit" ||
		bad "psi-lmkd.service: ExecStart is not '$SBINDIR/psi-lmkd -f'"
	grep -qx "command=\"$SBINDIR/psi-lmkd\"" "$openrc" ||
		bad "openrc/psi-lmkd: command is not \"$SBINDIR/psi-lmkd\""
fi
if [ -n "${SYSCONFDIR:-}" ]; then
	grep -q "PSI_LMKD_CONFIG:=$SYSCONFDIR/psi-lmkd.conf" "$openrc" ||
		bad "openrc/psi-lmkd: default config is not $SYSCONFDIR/psi-lmkd.conf"
fi
for key in Type=notify "ExecReload=/bin/sh -c 'kill -HUP \"\$\$MAINPID\"'" OOMScoreAdjust=-1000 Restart=on-failure \
	NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes; do
	grep -qxF "$key" "$unit" || bad "psi-lmkd.service: no '$key'"
done
grep -qE '^WatchdogSec=[1-9]' "$unit" || bad "psi-lmkd.service: no WatchdogSec="
# these would make /proc/pressure or the cgroup files unwritable or hidden
for key in ProtectKernelTunables=yes ProtectControlGroups=yes ProcSubset=pid ProtectProc=invisible; do
	grep -qxF "$key" "$unit" && bad "psi-lmkd.service: $key breaks the daemon (see the comment at its top)"
done

# ---------------------------------------------------------------- capabilities
awk '/caps_needed\[\] *= *\{/ { on = 1; next } on && /^\};/ { on = 0 }
     on { while (match($0, /CAP_[A-Z_]+/)) { print substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH) } }' \
	"$top/src/base/caps.c" | sort >"$tmp/caps.code"
sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr ' ' '\n' | sed '/^$/d' | sort >"$tmp/caps.unit"
sed -n 's/^[ \t]*capabilities[ \t]//p' "$rc" | tr -s ' \t' '\n' | sed '/^$/d; s/^/CAP_/' | sort >"$tmp/caps.rc"
[ -s "$tmp/caps.code" ] || bad "no caps_needed[] list found in src/base/caps.c"
cmp -s "$tmp/caps.code" "$tmp/caps.unit" ||
	bad "psi-lmkd.service CapabilityBoundingSet= ($(words "$tmp/caps.unit")) differs from src/base/caps.c ($(words "$tmp/caps.code"))"
grep -vx CAP_SYS_PTRACE "$tmp/caps.code" >"$tmp/caps.android"
cmp -s "$tmp/caps.android" "$tmp/caps.rc" ||
	bad "psi-lmkd.rc capabilities ($(words "$tmp/caps.rc")) differ from src/base/caps.c but CAP_SYS_PTRACE ($(words "$tmp/caps.android"))"
grep -qE '^service psi-lmkd /system/bin/psi-lmkd -f -c /system/etc/psi-lmkd-android.conf$' "$rc" ||
	bad "psi-lmkd.rc: no 'service psi-lmkd /system/bin/psi-lmkd -f -c /system/etc/psi-lmkd-android.conf'"
# the profile it names is the one shipped for Android (tests/test-config.c parses it)
grep -qx 'victim_order = adj' "$top/conf/psi-lmkd-android.conf" 2>/dev/null ||
	bad "psi-lmkd.rc names psi-lmkd-android.conf, but conf/ has none with victim_order = adj"
for key in 'class core' critical; do
	grep -qE "^[ \t]+$key\$" "$rc" || bad "psi-lmkd.rc: no '$key'"
done
grep -qE '^[ \t]+oneshot' "$rc" && bad "psi-lmkd.rc: a oneshot killer would not be restarted"

# ---------------------------------------------------------------- OpenRC
sh -n "$openrc" || bad "openrc/psi-lmkd: syntax error"
[ -x "$openrc" ] || bad "openrc/psi-lmkd is not executable"
head -n 1 "$openrc" | grep -qx '#!/sbin/openrc-run' || bad "openrc/psi-lmkd: first line is not #!/sbin/openrc-run"

# ---------------------------------------------------------------- systemd-analyze verify
if ! command -v systemd-analyze >/dev/null 2>&1; then
	note "systemd-analyze is not installed (Debian: systemd): the unit was not verified"
	[ $fail -eq 0 ] && exit 77
	exit $fail
fi
bin=${PSI_LMKD:-$build/psi-lmkd}
[ -x "$bin" ] || { bad "$bin is not built"; exit 1; }
# verify wants the ExecStart binary to exist; the unit's name must stay psi-lmkd.service
sed "s|^ExecStart=[^ ]*|ExecStart=$bin|" "$unit" >"$tmp/psi-lmkd.service"
out=$(systemd-analyze verify --man=no "$tmp/psi-lmkd.service" 2>&1)
st=$?
if [ $st -ne 0 ] || [ -n "$out" ]; then
	bad "systemd-analyze verify psi-lmkd.service (exit $st):"
	printf '%s\n' "$out" >&2
fi
if out=$(systemd-analyze security --offline=true "$tmp/psi-lmkd.service" 2>/dev/null); then
	note "$(printf '%s\n' "$out" | grep -E 'Overall exposure level' | LC_ALL=C tr -cd '[:print:]')"
fi
exit $fail
