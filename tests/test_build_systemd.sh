#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The build with libsystemd and the one without (make SYSTEMD=no): which
# one this is and what it does instead.
#   version  --version says "built without libsystemd" in the SYSTEMD=no
#            build only, and ldd agrees: libsystemd is linked in the
#            default build and nowhere in the SYSTEMD=no one.
#   journal  started by systemd (JOURNAL_STREAM set), the SYSTEMD=no build
#            writes each message to stderr with the "<N>" prefix journald
#            reads as its priority (<5> notice, <6> info), not the
#            foreground's "rngfeed: "; the default build sends them to
#            journald's socket, which a test does not write to (skipped).
# The notify protocol (READY=, STATUS=, WATCHDOG=, STOPPING=) needs no
# libsystemd in either build: tests/test_service.sh runs in both; socket
# activation: tests/test_egd_server.sh's systemd case.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_build_systemd.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
RNGFEED=${RNGFEED:-./rngfeed}
failures=0
say() { printf '%s\n' "$*"; }
ok() { say "ok: $*"; }
fail() { say "FAIL: $*"; failures=$((failures + 1)); }
tmp=$(mktemp -d) || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT

[ -x "$RNGFEED" ] || { say "SKIP: $RNGFEED is not built"; exit 77; }
version=$("$RNGFEED" --version 2>&1) || { say "FAIL: --version: $version"; exit 1; }
case "$version" in
*"(built without libsystemd)") build=no ;;
"rngfeed "[0-9]*) build=yes ;;
*) say "FAIL: --version says '$version'"; exit 1 ;;
esac
say "build: SYSTEMD=$build ($version)"

# --- version: ldd agrees -----------------------------------------------------
# The binary itself, not a wrapper script (make valgrind's).
if [ "$(head -c 4 "$RNGFEED" | od -An -c | tr -d ' ')" = '177ELF' ] &&
	libs=$(ldd "$RNGFEED" 2>&1); then
	n=$(grep -c libsystemd <<<"$libs")
	if [ $build = no ]; then
		[ "$n" -eq 0 ] && ok "version: SYSTEMD=no: ldd shows no libsystemd" ||
			fail "version: built without libsystemd, yet ldd shows: $(grep libsystemd <<<"$libs")"
	else
		[ "$n" -eq 1 ] && ok "version: default build: ldd shows libsystemd" ||
			fail "version: default build: $n libsystemd lines in ldd: $libs"
	fi
else
	say "SKIP: version: $RNGFEED is not an ELF binary ldd can read (a wrapper)"
fi

# --- journal -----------------------------------------------------------------
if [ $build = yes ]; then
	say "SKIP: journal: built with libsystemd: messages go to journald's socket (the machine's journal; make SYSTEMD=no check runs this case)"
elif ! "$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available'; then
	say "SKIP: journal: no RDRAND here (the source of the run that logs)"
else
	JOURNAL_STREAM=8:1234 timeout 30 "$RNGFEED" -c /dev/null --stdout -n rdrand \
		--bytes 1000 -v 2>"$tmp/err" >/dev/null
	rc=$?
	[ $rc -eq 0 ] || fail "journal: --stdout run exited $rc: $(head -3 "$tmp/err")"
	bad=$(grep -vE '^<[0-7]>' "$tmp/err" | head -3)
	if [ ! -s "$tmp/err" ]; then
		fail "journal: no messages on stderr"
	elif [ -n "$bad" ]; then
		fail "journal: lines without a priority prefix: $bad"
	elif ! grep -q '^<5>summary after' "$tmp/err" ||
		! grep -q '^<6>rdrand: using it' "$tmp/err"; then
		fail "journal: the summary is not at <5> or the source's line not at <6>: $(head -5 "$tmp/err")"
	else
		ok "journal: SYSTEMD=no: $(wc -l <"$tmp/err") lines on stderr, each with its <N> priority"
	fi
fi

[ $failures -eq 0 ] || exit 1
say PASS
