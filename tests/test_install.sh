#!/bin/bash
# "make install" into a DESTDIR: prints what it installed, checks the five
# files, their modes and that nothing else was installed; checks that a
# second install keeps an edited /etc/rngfeed.conf, that SBINDIR, MANDIR,
# SYSCONFDIR and SYSTEMDUNITDIR are honoured (PREFIX and SYSCONFDIR in the
# unit's ExecStart= and the binary's default configuration path too), that
# ENVFILE moves the options file the unit and the initramfs tools read
# (the RPM's /etc/sysconfig/rngfeed), and that "make uninstall"
# removes the program, the pages and the unit (and, like dpkg's "remove",
# leaves the administrator's configuration alone).
#
# Needs no root: everything goes into temporary directories.
set -u
cd "$(dirname "$0")/.." || exit 2
# Under make sanitize the library is the sanitized one, and make install
# builds its own binary (build/install) against it with plain flags.
if ldd ./rngfeed 2>/dev/null | grep -q libasan; then
	echo "SKIP: make install under make sanitize: its install build links plain objects against the sanitized library (make check runs this test)"
	exit 77
fi

for f in systemd/rngfeed.service systemd/rngfeed.conf man/rngfeed.8 man/rngfeed.conf.5; do
	if [ ! -e "$f" ]; then
		echo "FAIL: $f is missing; make install needs it"
		exit 1
	fi
done

. tests/lib_measure.sh
measure_temp test_install

# make runs quietly and without the parent's jobserver or directory noise.
# Run as root in a tree someone else owns ("sudo make check"), it builds
# as that owner, so build/install/ never holds a root-owned file there.
as_owner=()
owner=$(stat -c %U .)
if [ "$(id -u)" -eq 0 ] && [ "$owner" != root ] && command -v runuser >/dev/null; then
	as_owner=(runuser -u "$owner" --)
	chown "$owner" "$tmp"
fi
mk() {
	"${as_owner[@]}" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s "$@"
}

# Where the Makefile puts the unit unless told otherwise.
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
[ -n "$unitdir" ] || unitdir=/lib/systemd/system

# path mode, for: expect DESTDIR PATH... (each "path:mode")
expect() {
	local root=$1 item path mode have
	shift
	for item in "$@"; do
		path=${item%:*} mode=${item##*:}
		if [ ! -f "$root$path" ]; then
			fail "$path was not installed"
			continue
		fi
		have=$(stat -c %a "$root$path")
		[ "$have" = "$mode" ] || fail "$path has mode $have, not $mode"
	done
}

listing() { # DESTDIR: every file and link below it, with its mode
	(cd "$1" && find . ! -type d -printf '%M %p\n' | sed 's|^\(.\{10\}\) \./|\1 /|' | sort -k2)
}

# Nothing but the files named may be there.
only() {
	local root=$1 extra
	shift
	extra=$(cd "$root" && find . ! -type d -printf '/%P\n' | sort |
		grep -vxF -f <(printf '%s\n' "$@"))
	[ -z "$extra" ] || fail "unexpected files installed: $(echo $extra)"
}

# --- 1. the defaults, as a distribution would call it -------------------------
d=$tmp/root
if ! mk install DESTDIR="$d" PREFIX=/usr >"$tmp/log" 2>&1; then
	fail "make install DESTDIR=$d PREFIX=/usr failed:"
	sed 's/^/    /' "$tmp/log"
	exit 1
fi
echo "make install DESTDIR=\$tmp PREFIX=/usr installed:"
listing "$d" | sed 's/^/    /'
# The initramfs pieces (initramfs-tools' hook and boot scripts, dracut's
# module) go where those tools look, whatever PREFIX is; the switch that
# turns them on is a configuration file, /etc/default/rngfeed.
initramfs_files=(/usr/share/initramfs-tools/hooks/rngfeed
       /usr/share/initramfs-tools/scripts/init-top/rngfeed
       /usr/share/initramfs-tools/scripts/init-bottom/rngfeed
       /usr/lib/dracut/modules.d/90rngfeed/module-setup.sh
       /usr/lib/dracut/modules.d/90rngfeed/rngfeed-initrd.service
       /usr/lib/dracut/modules.d/90rngfeed/rngfeed-start.sh
       /usr/lib/dracut/modules.d/90rngfeed/rngfeed-stop.sh
       /usr/lib/dracut/modules.d/90rngfeed/initramfs-start
       /usr/lib/dracut/modules.d/90rngfeed/initramfs-stop)
files=(/usr/sbin/rngfeed /usr/share/man/man8/rngfeed.8
       /usr/share/man/man5/rngfeed.conf.5 "$unitdir/rngfeed.service"
       /etc/rngfeed.conf /etc/default/rngfeed "${initramfs_files[@]}")
expect "$d" /usr/sbin/rngfeed:755 /usr/share/man/man8/rngfeed.8:644 \
	/usr/share/man/man5/rngfeed.conf.5:644 "$unitdir/rngfeed.service:644" \
	/etc/rngfeed.conf:644 /etc/default/rngfeed:644 \
	/usr/share/initramfs-tools/hooks/rngfeed:755 \
	/usr/share/initramfs-tools/scripts/init-top/rngfeed:755 \
	/usr/share/initramfs-tools/scripts/init-bottom/rngfeed:755 \
	/usr/lib/dracut/modules.d/90rngfeed/module-setup.sh:755 \
	/usr/lib/dracut/modules.d/90rngfeed/rngfeed-initrd.service:644
only "$d" "${files[@]}"
grep -q '^RNGFEED_INITRAMFS=no$' "$d/etc/default/rngfeed" ||
	fail "/etc/default/rngfeed does not ship the initramfs switch off"
# The scripts name the installed binary and configuration, no placeholder.
if grep -l '@SBINDIR@\|@SYSCONFDIR@\|@ENVFILE@' "${initramfs_files[@]/#/$d}" 2>/dev/null | grep -q .; then
	fail "an initramfs script still has a @...@ placeholder"
fi
grep -q '^sbin=/usr/sbin/rngfeed$' "$d/usr/share/initramfs-tools/hooks/rngfeed" ||
	fail "the initramfs-tools hook does not name /usr/sbin/rngfeed"
for f in /usr/share/initramfs-tools/hooks/rngfeed \
	/usr/share/initramfs-tools/scripts/init-top/rngfeed \
	/usr/share/initramfs-tools/scripts/init-bottom/rngfeed \
	/usr/lib/dracut/modules.d/90rngfeed/module-setup.sh; do
	sh -n "$d$f" 2>/dev/null || bash -n "$d$f" || fail "$f does not parse"
done
cmp -s man/rngfeed.8 "$d/usr/share/man/man8/rngfeed.8" || fail "installed rngfeed.8 differs"
cmp -s systemd/rngfeed.service "$d$unitdir/rngfeed.service" || fail "installed unit differs"
cmp -s systemd/rngfeed.conf "$d/etc/rngfeed.conf" || fail "installed rngfeed.conf differs"
if ! "$d/usr/sbin/rngfeed" --version >"$tmp/version" 2>&1; then
	fail "the installed rngfeed --version failed: $(cat "$tmp/version")"
else
	echo "installed binary: $(cat "$tmp/version")"
fi

# --- 2. a second install keeps an edited configuration ------------------------
echo "interval = 17  # edited by the administrator" >>"$d/etc/rngfeed.conf"
cp "$d/etc/rngfeed.conf" "$tmp/edited.conf"
if ! mk install DESTDIR="$d" PREFIX=/usr >"$tmp/log" 2>&1; then
	fail "the second make install failed:"
	sed 's/^/    /' "$tmp/log"
fi
cmp -s "$tmp/edited.conf" "$d/etc/rngfeed.conf" ||
	fail "a second make install overwrote the edited /etc/rngfeed.conf"
expect "$d" /usr/sbin/rngfeed:755 "$unitdir/rngfeed.service:644"
only "$d" "${files[@]}"

# --- 3. uninstall ---------------------------------------------------------------
if ! mk uninstall DESTDIR="$d" PREFIX=/usr >"$tmp/log" 2>&1; then
	fail "make uninstall failed:"
	sed 's/^/    /' "$tmp/log"
fi
for f in /usr/sbin/rngfeed /usr/share/man/man8/rngfeed.8 \
	/usr/share/man/man5/rngfeed.conf.5 "$unitdir/rngfeed.service" "${initramfs_files[@]}"; do
	[ ! -e "$d$f" ] || fail "make uninstall left $f"
done
cmp -s "$tmp/edited.conf" "$d/etc/rngfeed.conf" ||
	fail "make uninstall removed or changed the edited /etc/rngfeed.conf"
echo "after make uninstall:"
listing "$d" | sed 's/^/    /'

# --- 4. the directory variables are honoured ------------------------------------
d=$tmp/custom
if ! mk install DESTDIR="$d" PREFIX=/opt/rf SBINDIR=/opt/rf/bin MANDIR=/opt/rf/man \
	SYSCONFDIR=/opt/rf/etc SYSTEMDUNITDIR=/usr/lib/systemd/system >"$tmp/log" 2>&1; then
	fail "make install with SBINDIR, MANDIR, SYSCONFDIR, SYSTEMDUNITDIR failed:"
	sed 's/^/    /' "$tmp/log"
fi
expect "$d" /opt/rf/bin/rngfeed:755 /opt/rf/man/man8/rngfeed.8:644 \
	/opt/rf/man/man5/rngfeed.conf.5:644 /usr/lib/systemd/system/rngfeed.service:644 \
	/opt/rf/etc/rngfeed.conf:644
only "$d" /opt/rf/bin/rngfeed /opt/rf/man/man8/rngfeed.8 /opt/rf/man/man5/rngfeed.conf.5 \
	/usr/lib/systemd/system/rngfeed.service /opt/rf/etc/rngfeed.conf \
	/opt/rf/etc/default/rngfeed "${initramfs_files[@]}"
grep -q '^sbin=/opt/rf/bin/rngfeed$' "$d/usr/share/initramfs-tools/hooks/rngfeed" &&
	grep -q '^conf=/opt/rf/etc/rngfeed.conf$' "$d/usr/share/initramfs-tools/hooks/rngfeed" ||
	fail "the initramfs-tools hook does not name SBINDIR's binary and SYSCONFDIR's configuration"
mk uninstall DESTDIR="$d" PREFIX=/opt/rf SBINDIR=/opt/rf/bin MANDIR=/opt/rf/man \
	SYSCONFDIR=/opt/rf/etc SYSTEMDUNITDIR=/usr/lib/systemd/system >/dev/null 2>&1
left=$(cd "$d" && find . ! -type d ! -path ./opt/rf/etc/rngfeed.conf \
	! -path ./opt/rf/etc/default/rngfeed)
[ -z "$left" ] || fail "make uninstall with custom directories left: $(echo $left)"

# --- 5. PREFIX and SYSCONFDIR reach the unit and the binary --------------------
# The unit must start the binary that was installed, and the binary must
# read the configuration that was installed; the tree's ./rngfeed keeps
# /etc/rngfeed.conf (the tests run it).
d=$tmp/local
if ! mk install DESTDIR="$d" PREFIX=/usr/local SYSCONFDIR=/opt/etc >"$tmp/log" 2>&1; then
	fail "make install PREFIX=/usr/local SYSCONFDIR=/opt/etc failed:"
	sed 's/^/    /' "$tmp/log"
fi
unit=$d$unitdir/rngfeed.service
for key in ExecStart ExecStopPost; do
	line=$(grep "^$key=" "$unit" 2>/dev/null)
	case "$line" in
	"$key=/usr/local/sbin/rngfeed "*) echo "unit: $line" ;;
	*) fail "PREFIX=/usr/local: the unit's $key is '$line', not /usr/local/sbin/rngfeed" ;;
	esac
done
grep -n '/usr/sbin/rngfeed\|/etc/rngfeed\.conf' "$unit" | grep -v '/opt/etc/rngfeed\.conf' |
	sed 's/^/    /' | grep . && fail "the unit still names the default paths (above)"
[ -x "$d/usr/local/sbin/rngfeed" ] || fail "PREFIX=/usr/local: no /usr/local/sbin/rngfeed"
def=$("$d/usr/local/sbin/rngfeed" --help 2>&1 | grep -oE 'default [^ ]*rngfeed\.conf')
[ "$def" = "default /opt/etc/rngfeed.conf" ] ||
	fail "SYSCONFDIR=/opt/etc: the installed binary's configuration is '${def#default }', not /opt/etc/rngfeed.conf"
echo "installed binary: $def"
[ -f "$d/opt/etc/rngfeed.conf" ] || fail "SYSCONFDIR=/opt/etc: no /opt/etc/rngfeed.conf installed"
if [ -x ./rngfeed ]; then
	tree=$(./rngfeed --help 2>&1 | grep -oE 'default [^ ]*rngfeed\.conf')
	[ "$tree" = "default /etc/rngfeed.conf" ] || fail "the tree's ./rngfeed now says '$tree'"
fi

# --- 6. ENVFILE: the options file where the RPM keeps it -----------------------
# The unit reads it (EnvironmentFile=-) and passes $RNGFEED_OPTIONS; the
# initramfs tools read RNGFEED_INITRAMFS from the same file.
d=$tmp/envfile
if ! mk install DESTDIR="$d" PREFIX=/usr ENVFILE=/etc/sysconfig/rngfeed >"$tmp/log" 2>&1; then
	fail "make install ENVFILE=/etc/sysconfig/rngfeed failed:"
	sed 's/^/    /' "$tmp/log"
fi
expect "$d" /etc/sysconfig/rngfeed:644
[ ! -e "$d/etc/default/rngfeed" ] || fail "ENVFILE=/etc/sysconfig/rngfeed: /etc/default/rngfeed installed too"
grep -q '^#RNGFEED_OPTIONS=' "$d/etc/sysconfig/rngfeed" ||
	fail "the options file has no commented RNGFEED_OPTIONS="
unit=$d$unitdir/rngfeed.service
[ "$(grep -c '^EnvironmentFile=' "$unit")" = 1 ] &&
	grep -qx 'EnvironmentFile=-/etc/sysconfig/rngfeed' "$unit" ||
	fail "ENVFILE: the unit's EnvironmentFile= is '$(grep '^EnvironmentFile=' "$unit")'"
grep -qx 'ExecStart=/usr/sbin/rngfeed -f $RNGFEED_OPTIONS' "$unit" ||
	fail "the unit's ExecStart= does not pass \$RNGFEED_OPTIONS: $(grep '^ExecStart=' "$unit")"
for f in /usr/lib/dracut/modules.d/90rngfeed/module-setup.sh /usr/share/initramfs-tools/hooks/rngfeed; do
	grep -q '\. /etc/sysconfig/rngfeed$' "$d$f" || fail "ENVFILE: $f does not read /etc/sysconfig/rngfeed"
	grep -v '^[[:space:]]*#' "$d$f" | grep -q '/etc/default/rngfeed' &&
		fail "ENVFILE: $f still reads /etc/default/rngfeed"
done
echo "ENVFILE=/etc/sysconfig/rngfeed: $(grep '^EnvironmentFile=' "$unit")"

[ "$failures" -eq 0 ] || exit 1
echo "PASS: make install and make uninstall"
