#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The AppArmor profile apparmor/usr.sbin.rngfeed:
#   1. make install APPARMOR=yes installs it as /etc/apparmor.d/usr.sbin.rngfeed, and
#      the unit's drop-in (rngfeed.service.d/apparmor.conf) that loads it before the
#      first start (nothing of it without APPARMOR=yes); with SBINDIR=/usr/local/sbin and
#      SYSCONFDIR=/usr/local/etc it is usr.local.sbin.rngfeed, attached to that binary,
#      allowing that configuration file and including local/usr.local.sbin.rngfeed;
#      make uninstall removes it;
#   2. apparmor_parser -Q -K (parse and compile only: no AppArmor kernel needed) takes
#      both (skipped, with the reason, without apparmor_parser);
#   3. it allows the paths the daemon's defaults use (the hand-over's record and
#      lock, the configuration, the devices, the hw_random attributes) and no file
#      source outside /run/rngfeed/ and /var/lib/rngfeed/;
#   4. rngfeed's word on a file source it may not open: run without CAP_DAC_OVERRIDE,
#      the message names the file's mode and a security policy, and the audit log; for
#      a file its mode lets it read (an LD_PRELOAD shim failing the open with EACCES
#      stands in for AppArmor), the policy alone (the old message said only
#      "Permission denied").  Denials by the profile itself are booted in
#      tests/vm/init-boot.sh (systemd+apparmor).
set -u
cd "$(dirname "$0")/.." || exit 2
RNGFEED=${RNGFEED:-./rngfeed}
# shellcheck source=tests/lib_measure.sh
. tests/lib_measure.sh
need_built "$RNGFEED"
measure_temp test_apparmor

mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s "$@" >"$tmp/make.log" 2>&1 ||
		{ fail "make $*: $(cat "$tmp/make.log")"; return 1; }
}

# ---- 1. installed where and as what ---------------------------------------------
mk install-apparmor DESTDIR="$tmp/none"
[ ! -e "$tmp/none" ] || fail "make install-apparmor without APPARMOR=yes installed: $(find "$tmp/none" -type f)"
mk install-apparmor APPARMOR=yes DESTDIR="$tmp/d1"
p1=$tmp/d1/etc/apparmor.d/usr.sbin.rngfeed
if [ -f "$p1" ] && [ "$(stat -c %a "$p1")" = 644 ]; then
	cmp -s "$p1" apparmor/usr.sbin.rngfeed || fail "with the default paths the installed profile differs from apparmor/usr.sbin.rngfeed"
	ok "make install APPARMOR=yes: /etc/apparmor.d/usr.sbin.rngfeed, mode 644"
else
	fail "make install APPARMOR=yes did not install /etc/apparmor.d/usr.sbin.rngfeed (mode 644)"
fi
# The unit's drop-in that loads the profile before the first start.
dropin=$(find "$tmp/d1" -path '*/rngfeed.service.d/apparmor.conf')
if [ -f "$dropin" ]; then
	cmd=$(sed -n "s|^ExecStartPre=+-/bin/sh -c '\(.*\)'\$|\1|p" "$dropin" | sed 's/\$\$/$/g')
	[ -n "$cmd" ] && sh -n -c "$cmd" &&
		grep -q 'apparmor_parser -r "$p"' <<<"$cmd" && grep -q 'p=/etc/apparmor.d/usr.sbin.rngfeed ' <<<"$cmd" &&
		ok "the unit's drop-in ${dropin#"$tmp/d1"} loads the profile first (ExecStartPre=+-, valid sh)" ||
		fail "the drop-in's ExecStartPre= is not the expected sh command: $(cat "$dropin")"
	# A kernel with AppArmor and no apparmor package (a minimal Debian, a
	# booted guest of make vm-test-systemd): exit 0 and not a word.
	mkdir -p "$tmp/nopath" && ln -sf "$(command -v grep)" "$tmp/nopath/grep"
	: >"$tmp/profiles-empty"
	nocmd=${cmd//\/etc\/apparmor.d\/usr.sbin.rngfeed/$p1}
	nocmd=${nocmd//\/sys\/kernel\/security\/apparmor\/profiles/$tmp/profiles-empty}
	if PATH=$tmp/nopath /bin/sh -c "$nocmd" >"$tmp/nop.out" 2>&1 && [ ! -s "$tmp/nop.out" ]; then
		ok "the drop-in without apparmor_parser on PATH: exit 0, nothing said"
	else
		fail "the drop-in without apparmor_parser on PATH said: $(cat "$tmp/nop.out")"
	fi
else
	fail "make install APPARMOR=yes did not install rngfeed.service.d/apparmor.conf"
fi
mk install-apparmor APPARMOR=yes DESTDIR="$tmp/d2" SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc
p2=$tmp/d2/usr/local/etc/apparmor.d/usr.local.sbin.rngfeed
if [ -f "$p2" ]; then
	grep -q '^profile rngfeed /usr/local/sbin/rngfeed ' "$p2" &&
		grep -q '^  /usr/local/etc/rngfeed.conf r,' "$p2" &&
		grep -q '^  /usr/local/sbin/rngfeed mr,' "$p2" &&
		grep -q 'include if exists <local/usr.local.sbin.rngfeed>' "$p2" &&
		! grep -qE '(^|[^l])/usr/sbin/rngfeed|[ ]/etc/rngfeed\.conf|[^l]\.sbin\.rngfeed' "$p2" &&
		ok "SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc: usr.local.sbin.rngfeed, attached to /usr/local/sbin/rngfeed, with /usr/local/etc/rngfeed.conf" ||
		fail "the profile for SBINDIR=/usr/local/sbin does not name that binary, configuration and local include: $(grep -n 'rngfeed' "$p2" | head -n 8)"
else
	fail "SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc: no $p2"
fi

# ---- 2. the parser takes it ----------------------------------------------------------
if command -v apparmor_parser >/dev/null 2>&1 && [ -d /etc/apparmor.d/abstractions ]; then
	apparmor_parser -Q -K "$p1" >"$tmp/parse" 2>&1 &&
		ok "apparmor_parser -Q -K takes usr.sbin.rngfeed" ||
		fail "apparmor_parser -Q -K usr.sbin.rngfeed: $(grep -v 'Cache read/write disabled' "$tmp/parse")"
	# The other paths' profile, with the system's abstractions.
	apparmor_parser -Q -K -I /etc/apparmor.d "$p2" >"$tmp/parse" 2>&1 &&
		ok "apparmor_parser -Q -K takes usr.local.sbin.rngfeed" ||
		fail "apparmor_parser -Q -K usr.local.sbin.rngfeed: $(grep -v 'Cache read/write disabled' "$tmp/parse")"
else
	say "SKIP: apparmor_parser (or /etc/apparmor.d/abstractions) is not installed: the profile's syntax not checked (apt-get install apparmor)"
fi
grep -q 'p=/usr/local/etc/apparmor.d/usr.local.sbin.rngfeed ' "$(find "$tmp/d2" -path '*/rngfeed.service.d/apparmor.conf')" ||
	fail "with the other paths the drop-in does not load usr.local.sbin.rngfeed from /usr/local/etc/apparmor.d"
mk uninstall-init APPARMOR=yes DESTDIR="$tmp/d2" SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc
[ ! -e "$p2" ] && [ -z "$(find "$tmp/d2" -name apparmor.conf)" ] && ok "make uninstall removes the profile and the drop-in" ||
	fail "make uninstall left $p2 or the drop-in"

# ---- 3. what it allows -----------------------------------------------------------------
rules=$(grep -v '^[[:space:]]*#' apparmor/usr.sbin.rngfeed)
for want in '@{run}/rngfeed/\*\* rwk' '/etc/rngfeed.conf r' '/dev/random rw' '/dev/hwrng r' \
	'/dev/ttyACM\[0-9\]\* rw' '/dev/ttyUSB\[0-9\]\* rw' \
	'/dev/tpmrm\[0-9\]\* rw' '@{sys}/devices/virtual/misc/hw_random/rng_{current,quality} rw' 'capability sys_admin' \
	'network netlink dgram' '@{run}/rngfeed-egd/\* rw' '/var/lib/rngfeed/\*\* rwk' \
	'include <abstractions/base>' 'include if exists <local/usr.sbin.rngfeed>'; do
	grep -q "^ *$want" <<<"$rules" || fail "the profile has no rule '$want'"
done
# Files anywhere else: no rule for a path outside the daemon's own directories,
# devices, /etc, /proc and the /sys attributes it reads (hw_random, a USB
# stick's ids, s390x's secure-guest flag).
others=$(grep -E '^ *(/|@\{)' <<<"$rules" | grep -vE '^ *(@\{run\}/(rngfeed|rngfeed-egd|systemd/notify)|/var/lib/(rngfeed|prometheus/node-exporter)/|/etc/|/dev/|@\{PROC\}/sys/kernel/random/|@\{sys\}/(devices/virtual/misc/hw_random|module/rng_core)/|@\{sys\}/dev/char/ r,|@\{sys\}/devices/\*\*/usb\*/\*\*/\{idVendor,[a-zA-Z,]*\} r,|@\{sys\}/firmware/uv/prot_virt_guest r,|/usr/sbin/rngfeed )')
[ -z "$others" ] || fail "the profile allows files outside the daemon's own places: $others"
grep -qE '^ *capability (dac_override|dac_read_search|sys_ptrace|net_admin|sys_module)' <<<"$rules" &&
	fail "the profile grants a capability the daemon does not use: $(grep -E '^ *capability' <<<"$rules" | paste -sd' ')"
[ $failures -eq 0 ] && ok "the profile allows the daemon's paths, and files only in its own places"

# ---- 4. the message on a denied open ------------------------------------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	head -c 4096 /dev/urandom >"$tmp/src"
	chmod 000 "$tmp/src"
	out=$(setpriv --inh-caps=-all --bounding-set=-dac_override,-dac_read_search \
		"$RNGFEED" -c /dev/null --list -n file -O file:device="$tmp/src" 2>&1)
	line=$(grep '^file ' <<<"$out")
	[[ "$line" == *"cannot open $tmp/src: Permission denied (by its mode or owner, or by a security policy such as AppArmor or SELinux; see the kernel's audit log)"* ]] &&
		ok "without CAP_DAC_OVERRIDE: '$(grep -o 'cannot open.*' <<<"$line")'" ||
		fail "the message for a file source it may not open: '$line'"
else
	say "SKIP: the message on a denied open: needs root and setpriv (to run without CAP_DAC_OVERRIDE)"
fi
# As a policy denies it: the file's mode lets it be read, its open fails
# with EACCES (an LD_PRELOAD shim stands in for AppArmor).
if command -v cc >/dev/null 2>&1; then
	cat >"$tmp/deny.c" <<'EOF_C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
static int denied(const char *p)
{
	const char *d = getenv("DENY_OPEN");
	return d && p && strcmp(p, d) == 0;
}
#define SHIM(name, ...) \
	int name(__VA_ARGS__, int flags, ...) \
	{ \
		va_list ap; \
		va_start(ap, flags); \
		mode_t m = va_arg(ap, mode_t); \
		va_end(ap); \
		if (denied(path)) { errno = EACCES; return -1; } \
		int (*real)() = (int (*)())dlsym(RTLD_NEXT, #name); \
		return CALL_##name; \
	}
#define CALL_open real(path, flags, m)
#define CALL_open64 real(path, flags, m)
#define CALL_openat real(dir, path, flags, m)
#define CALL_openat64 real(dir, path, flags, m)
SHIM(open, const char *path)
SHIM(open64, const char *path)
SHIM(openat, int dir, const char *path)
SHIM(openat64, int dir, const char *path)
/* _FORTIFY_SOURCE's checked forms, for flags the compiler cannot see */
#define SHIM2(name) \
	int name(const char *path, int flags) \
	{ \
		if (denied(path)) { errno = EACCES; return -1; } \
		return ((int (*)(const char *, int))dlsym(RTLD_NEXT, #name))(path, flags); \
	}
SHIM2(__open_2)
SHIM2(__open64_2)
EOF_C
	if [ -n "${RNGFEED_SANITIZED:-}" ]; then
		# ASan must be first in the process: an LD_PRELOAD shim is refused.
		say "SKIP: the policy's message: ./rngfeed is built with ASan, which refuses the LD_PRELOAD shim standing in for the policy (make check runs it)"
	elif cc -shared -fPIC -o "$tmp/deny.so" "$tmp/deny.c" -ldl 2>"$tmp/cc.log"; then
		head -c 4096 /dev/urandom >"$tmp/src2"
		chmod 644 "$tmp/src2"
		line=$(DENY_OPEN="$tmp/src2" LD_PRELOAD="$tmp/deny.so" \
			timeout 20 "$RNGFEED" -c /dev/null -f -t -n file -O file:device="$tmp/src2" 2>&1 | grep 'file: ')
		[[ "$line" == *"cannot open $tmp/src2: Permission denied (not by its mode, which lets this process read it: a security policy such as AppArmor or SELinux denies it; see the kernel's audit log)"* ]] &&
			ok "a readable file whose open is denied: '$(grep -o 'cannot open.*' <<<"$line")'" ||
			fail "the message for a readable file whose open is denied: '$line'"
	else
		say "SKIP: the policy's message: the shim does not build: $(head -n 3 "$tmp/cc.log")"
	fi
else
	say "SKIP: the policy's message: no cc to build the shim that stands in for the policy"
fi

[ $failures -eq 0 ] || exit 1
echo "PASS: the AppArmor profile installs, parses and allows the daemon's own places; a denied open says who may deny it"
