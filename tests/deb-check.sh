#!/bin/bash
# Build the Debian package and try it on this machine, for .ci/run (not run
# by "make check": it takes a while, needs root and installs a package).
#
#   tests/deb-check.sh [--head] [--keep]
#
# 1. Copies the source tree into a temporary directory -- the files of the
#    working tree that git tracks or does not ignore, or with --head the
#    committed tree (git archive HEAD) -- so that nothing is built in the
#    repository and dpkg-buildpackage's output lands in the temporary
#    directory, not in the repository's parent.
# 2. Installs missing build dependencies (apt-get build-dep, as root) and
#    runs dpkg-buildpackage -us -uc -b.
# 3. Runs lintian on the source package (dpkg-source -b of the pristine
#    copy) and on the .deb: any error or warning fails; hints are shown.
#    The .deb must carry the LSB init script and the AppArmor profile.
# 4. As root: dpkg -i, checks /usr/sbin/rngfeed --version, the unit, its
#    sysinit.target.wants link, both man pages and the conffile without
#    systemctl, the init script and the profile (conffiles; the profile
#    parses, with apparmor_parser if there is one; dh_apparmor's local/
#    include); then dpkg -r (the conffile stays) and dpkg -P (it goes),
#    leaving the machine as it was.  A machine where rngfeed is already
#    installed is left alone (exit 77).  The postinst starts the init
#    script where no systemd runs, unless policy-rc.d forbids it (a
#    container's usual one does); dpkg -r stops it again.
#
# Exit 0 pass, 1 fail, 77 skip (the install part needs root).
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$PWD

from=worktree keep=0
for arg in "$@"; do
	case $arg in
	--head) from=head ;;
	--keep) keep=1 ;;
	*) echo "usage: $0 [--head] [--keep]" >&2; exit 2 ;;
	esac
done

for tool in dpkg-buildpackage dpkg-checkbuilddeps dh lintian; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "FAIL: $tool not found (apt-get install dpkg-dev debhelper lintian fakeroot)"
		exit 1
	fi
done

tmp=$(mktemp -d /tmp/rngfeed-deb.XXXXXX) || exit 2
if [ $keep -eq 1 ]; then
	echo "keeping $tmp"
else
	trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
fi
step() { echo "== $*"; }
die() {
	echo "FAIL: $*"
	exit 1
}

# --- 1. a clean copy of the tree ----------------------------------------------
src=$tmp/rngfeed
mkdir "$src"
if [ ! -e .git ]; then
	step "copying $repo (not a git checkout) to $src"
	cp -a . "$src" || die "cp -a failed"
elif [ $from = head ]; then
	step "git archive HEAD ($(git rev-parse --short HEAD)) to $src"
	git archive --format=tar HEAD | tar -x -C "$src" || die "git archive failed"
else
	step "copying the working tree (tracked and unignored files) to $src"
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -c --null -T - -f - | tar -x -C "$src" || die "copying the tree failed"
fi
[ -x "$src/debian/rules" ] || die "$src/debian/rules is missing or not executable"
cd "$src" || exit 2
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
deb=$tmp/rngfeed_${version}_${arch}.deb

# --- 2. source package and build ---------------------------------------------------
# The source package, from the pristine copy, so that lintian also checks
# debian/ itself (control, copyright, rules, changelog).
step "dpkg-source -b: rngfeed_$version.dsc"
(cd "$tmp" && dpkg-source -b rngfeed) >"$tmp/source.log" 2>&1 ||
	{ cat "$tmp/source.log"; die "dpkg-source -b failed"; }
if ! dpkg-checkbuilddeps >"$tmp/bdeps" 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		cat "$tmp/bdeps"
		die "build dependencies are missing and installing them needs root"
	fi
	step "installing build dependencies: $(sed -n 's/.*Unmet build dependencies: //p' "$tmp/bdeps")"
	DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q "$src" >"$tmp/apt.log" 2>&1 ||
		{ tail -n 30 "$tmp/apt.log"; die "apt-get build-dep failed"; }
fi
step "dpkg-buildpackage -us -uc -b -Jauto (version $version)"
# -J: make -j and the unit tests side by side, one per CPU (parallel=N).
if ! dpkg-buildpackage -us -uc -b -Jauto >"$tmp/build.log" 2>&1; then
	tail -n 60 "$tmp/build.log"
	die "dpkg-buildpackage failed (whole log: $tmp/build.log with --keep)"
fi
grep -E '^(tests:|dpkg-deb: building)' "$tmp/build.log"
[ -f "$deb" ] || die "no $deb after the build"
cd "$tmp" || exit 2
step "contents of $(basename "$deb")"
dpkg-deb -c "$deb" | awk '{ print "    " $1, $NF }'
# (where debian/rules puts units: systemd's .pc says)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
for f in ./etc/init.d/rngfeed:-rwxr-xr-x ./etc/apparmor.d/usr.sbin.rngfeed:-rw-r--r-- \
	".$unitdir/rngfeed.service.d/apparmor.conf:-rw-r--r--"; do
	dpkg-deb -c "$deb" | awk -v f="${f%:*}" -v m="${f##*:}" '$NF == f && $1 == m { found = 1 } END { exit !found }' ||
		die "the package does not carry ${f%:*} with mode ${f##*:}"
done
[ ! -e "$repo/../$(basename "$deb")" ] || [ "$repo/../$(basename "$deb")" -ot "$deb" ] ||
	die "a .deb appeared next to the repository"

# --- 3. lintian -------------------------------------------------------------------
step "lintian rngfeed_$version.dsc $(basename "$deb")"
lintian --fail-on error,warning --display-info --pedantic "$tmp/rngfeed_$version.dsc" "$deb" \
	>"$tmp/lintian.log" 2>&1
lintian_rc=$?
# Lintian's own advice on running as root is not about the package.
grep -v 'running with root privileges' "$tmp/lintian.log" | sed 's/^/    /'
[ -s "$tmp/lintian.log" ] || echo "    (no tags)"
[ $lintian_rc -eq 0 ] || die "lintian reports errors or warnings (exit $lintian_rc)"
! grep -q '^[EW]: ' "$tmp/lintian.log" || die "lintian reports errors or warnings"

# --- 4. install, check, remove, purge ----------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: the package built and passed lintian; dpkg -i needs root"
	exit 77
fi
if dpkg-query -W -f='${Status}\n' rngfeed 2>/dev/null | grep -q ' installed$'; then
	echo "SKIP: rngfeed is already installed on this machine; not touching it"
	exit 77
fi
had_conf=0
[ -e /etc/rngfeed.conf ] && had_conf=1

step "dpkg -i $(basename "$deb")"
export DEBIAN_FRONTEND=noninteractive
# --force-confold: never replace a /etc/rngfeed.conf that was already here.
dpkg -i --force-confdef --force-confold "$deb" >"$tmp/dpkg.log" 2>&1 ||
	{ cat "$tmp/dpkg.log"; dpkg -P rngfeed >/dev/null 2>&1; die "dpkg -i failed"; }
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

out=$(/usr/sbin/rngfeed --version 2>&1) || bad "/usr/sbin/rngfeed --version failed: $out"
[ "$out" = "rngfeed ${version%-*}" ] || bad "/usr/sbin/rngfeed --version says '$out', expected 'rngfeed ${version%-*}'"
echo "    /usr/sbin/rngfeed --version: $out"
/usr/sbin/rngfeed --help >/dev/null 2>&1 || bad "/usr/sbin/rngfeed --help failed"

unit=$(dpkg -L rngfeed | grep '/systemd/system/rngfeed\.service$' | head -n1)
if [ -z "$unit" ] || [ ! -f "$unit" ]; then
	bad "the package installs no rngfeed.service"
else
	echo "    unit: $unit"
	grep -q '^WantedBy=sysinit.target' "$unit" || bad "$unit is not WantedBy=sysinit.target"
	grep -q '^ExecStart=/usr/sbin/rngfeed' "$unit" || bad "$unit does not start /usr/sbin/rngfeed"
	# dh_installsystemd's postinst enables it with deb-systemd-helper,
	# which works without a running systemd.
	link=/etc/systemd/system/sysinit.target.wants/rngfeed.service
	if [ -L "$link" ]; then
		echo "    enabled: $link -> $(readlink "$link")"
	else
		bad "the unit was not enabled ($link is missing)"
	fi
fi
# Minimal images (debian:*-slim) tell dpkg not to unpack man pages; there,
# check that the package carries them instead.
man_excluded=0
grep -hqs '^path-exclude[= ]*/usr/share/man' /etc/dpkg/dpkg.cfg /etc/dpkg/dpkg.cfg.d/* &&
	man_excluded=1
for page in /usr/share/man/man8/rngfeed.8.gz /usr/share/man/man5/rngfeed.conf.5.gz; do
	if [ $man_excluded -eq 1 ]; then
		if dpkg-deb -c "$deb" | grep -q " \.$page\$"; then
			echo "    man page: $page (in the package; dpkg here excludes /usr/share/man)"
		else
			bad "the package does not contain $page"
		fi
	elif [ ! -f "$page" ]; then
		bad "$page is not installed"
	elif ! gzip -dc "$page" | grep -q '^\.TH'; then
		bad "$page is not a man page"
	else
		echo "    man page: $page"
	fi
done
if [ $man_excluded -eq 0 ] && command -v man >/dev/null 2>&1; then
	man -w rngfeed >/dev/null 2>&1 || bad "man -w rngfeed does not find the page"
	man -w 5 rngfeed.conf >/dev/null 2>&1 || bad "man -w 5 rngfeed.conf does not find the page"
fi
conffiles=$(dpkg-query -W -f='${Conffiles}\n' rngfeed)
grep -q '^ */etc/rngfeed.conf ' <<<"$conffiles" || bad "/etc/rngfeed.conf is not a conffile: '$conffiles'"
if [ $had_conf -eq 0 ]; then
	cmp -s "$src/systemd/rngfeed.conf" /etc/rngfeed.conf ||
		bad "/etc/rngfeed.conf is not the example configuration"
fi
/usr/sbin/rngfeed -c /etc/rngfeed.conf --list >"$tmp/list" 2>&1 ||
	bad "rngfeed --list with the installed configuration failed: $(cat "$tmp/list")"
[ -f /usr/share/doc/rngfeed/copyright ] || bad "/usr/share/doc/rngfeed/copyright is missing"
# The init script (update-rc.d put it into runlevel S where the machine has
# rc directories) and the AppArmor profile, both conffiles.
for f in /etc/init.d/rngfeed /etc/apparmor.d/usr.sbin.rngfeed; do
	grep -q "^ *$f " <<<"$conffiles" || bad "$f is not a conffile: '$conffiles'"
done
[ -x /etc/init.d/rngfeed ] && sh -n /etc/init.d/rngfeed || bad "/etc/init.d/rngfeed is missing or not valid sh"
links=$(ls /etc/rc[S0-6].d/*rngfeed 2>/dev/null | paste -sd' ')
echo "    init script: /etc/init.d/rngfeed${links:+, $links}"
[ -e /etc/apparmor.d/local/usr.sbin.rngfeed ] ||
	bad "dh_apparmor's postinst did not make /etc/apparmor.d/local/usr.sbin.rngfeed"
if command -v apparmor_parser >/dev/null 2>&1; then
	apparmor_parser -Q -K /etc/apparmor.d/usr.sbin.rngfeed >"$tmp/aa" 2>&1 ||
		bad "apparmor_parser does not take the installed profile: $(cat "$tmp/aa")"
	echo "    AppArmor profile: /etc/apparmor.d/usr.sbin.rngfeed (parses)"
fi
started=$(pgrep -x rngfeed -a | grep -c '^[0-9]* /usr/sbin/rngfeed')
[ "$started" = 0 ] || echo "    the postinst started the init script: $started daemon(s) (dpkg -r stops it)"

step "dpkg -r rngfeed"
dpkg -r rngfeed >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; bad "dpkg -r failed"; }
[ ! -e /usr/sbin/rngfeed ] || bad "dpkg -r left /usr/sbin/rngfeed"
[ -n "$unit" ] && [ -e "$unit" ] && bad "dpkg -r left $unit"
[ -e /etc/rngfeed.conf ] || bad "dpkg -r removed the conffile (only purge should)"
[ "$(pgrep -x rngfeed -a | grep -c '^[0-9]* /usr/sbin/rngfeed')" = 0 ] ||
	bad "dpkg -r left /usr/sbin/rngfeed running: $(pgrep -x rngfeed -a)"
if [ $had_conf -eq 0 ]; then
	step "dpkg -P rngfeed"
	dpkg -P rngfeed >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; bad "dpkg -P failed"; }
	[ ! -e /etc/rngfeed.conf ] || bad "dpkg -P left /etc/rngfeed.conf"
	[ ! -L /etc/systemd/system/sysinit.target.wants/rngfeed.service ] ||
		bad "dpkg -P left the sysinit.target.wants link"
	[ ! -e /etc/init.d/rngfeed ] && [ ! -e /etc/apparmor.d/usr.sbin.rngfeed ] &&
		[ ! -e /etc/apparmor.d/local/usr.sbin.rngfeed ] ||
		bad "dpkg -P left the init script or the AppArmor profile"
	! ls /etc/rc[S0-6].d/*rngfeed >/dev/null 2>&1 || bad "dpkg -P left rc links: $(ls /etc/rc[S0-6].d/*rngfeed)"
else
	echo "    /etc/rngfeed.conf was here before: package not purged, file kept"
fi

[ $fail -eq 0 ] && echo "PASS: the package builds, passes lintian, installs, works and goes away"
exit $fail
