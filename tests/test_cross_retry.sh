#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make cross-check rides out a Debian archive in flux (issue 33 item 13):
# a CI run that passed every stage failed because bookworm-security's
# mirror was mid-sync ("File has unexpected size ... Mirror sync in
# progress?") when the i386 root was made.  Without the network:
#   retry      tests/cross/archive-retry.sh tries a command that fails
#              for the archive again (back-off 0 here) and succeeds with it;
#   unreachable  one that keeps failing for it: exit 77 and one line,
#              "WHO: SKIP: the Debian archive stayed unreachable ...";
#   own        a failure that is not the archive's (a package that does not
#              exist): no retry, the command's status;
#   make       make cross-check where the root cannot be made for that
#              reason: passes, with one line "cross-check ARCH: SKIP: ...";
#   mmdebstrap (root, mmdebstrap, binfmt_misc mounted) tests/cross/mkchroot.sh
#              against a mirror that refuses connections (127.0.0.1:9):
#              apt's real words are taken for the archive's fault, exit 77.
# Exit 0 pass, 1 fail, 77 skip.
set -u
[ -z "${RNGFEED_SANITIZED:-}" ] ||
	{ echo "SKIP: make sanitize: it tests a shell script of the cross-checks, no program of the build (make check runs this test)"; exit 77; }
. tests/lib_measure.sh
measure_temp test_cross_retry
retry=tests/cross/archive-retry.sh
[ -x "$retry" ] || { fail "$retry is missing"; exit 1; }
export ARCHIVE_BACKOFF=0

# A fetch that fails for the archive until $tmp/left reaches 0.
sync_error='E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-i386/Packages.xz  File has unexpected size (166620 != 166540). Mirror sync in progress? [IP: 151.101.2.132 80]'
cat >"$tmp/flaky" <<EOF
#!/bin/sh
n=\$(cat "$tmp/left")
echo "I: progress line"
if [ "\$n" -gt 0 ]; then
	echo \$((n - 1)) >"$tmp/left"
	echo '$sync_error' >&2
	echo 'E: apt-get update failed' >&2
	exit 100
fi
echo "I: done"
EOF
chmod +x "$tmp/flaky"

echo 2 >"$tmp/left"
out=$(ARCHIVE_TRIES=4 "$retry" "mkchroot: i386" "$tmp/flaky" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
	fail "retry: exit $rc after two failures of four tries: $out"
elif [ "$(grep -c 'the Debian archive failed (try [12] of 4: E: Failed to fetch .*File has unexpected size' <<<"$out")" -ne 2 ]; then
	fail "retry: the two failed tries are not said: $out"
elif grep -q 'I: ' <<<"$out"; then
	fail "retry: mmdebstrap's progress lines shown: $out"
else
	ok "retry: two failures for the archive, then done (exit 0)"
fi

echo 99 >"$tmp/left"
out=$(ARCHIVE_TRIES=3 "$retry" "mkchroot: i386" "$tmp/flaky" 2>&1)
rc=$?
skips=$(grep -c ': SKIP: ' <<<"$out")
if [ $rc -ne 77 ]; then
	fail "unreachable: exit $rc, want 77: $out"
elif [ "$skips" -ne 1 ] ||
	! grep -q '^mkchroot: i386: SKIP: the Debian archive stayed unreachable after 3 tries in [0-9]* s (last: E: Failed to fetch .*Mirror sync in progress' <<<"$out"; then
	fail "unreachable: not one line saying why: $out"
elif [ "$(cat "$tmp/left")" != 96 ]; then
	fail "unreachable: tried $((99 - $(cat "$tmp/left"))) times, want 3"
else
	ok "unreachable: $(grep ': SKIP: ' <<<"$out" | cut -c1-120)..."
fi

printf '#!/bin/sh\necho "E: Unable to locate package no-such-package" >&2\nexit 100\n' >"$tmp/own"
chmod +x "$tmp/own"
out=$(ARCHIVE_TRIES=4 "$retry" "mkchroot: i386" "$tmp/own" 2>&1)
rc=$?
if [ $rc -ne 100 ] || grep -q 'try 1 of' <<<"$out" || grep -q 'SKIP' <<<"$out"; then
	fail "own: exit $rc (want 100, no retry, no skip): $out"
else
	ok "own: a failure that is not the archive's: no retry, exit 100"
fi

# make cross-check in a copy of the tree whose mkchroot.sh meets the
# archive in flux every time.
mkdir -p "$tmp/tree/tests/cross"
cp Makefile "$tmp/tree/"
cp tests/cross/cross-check.sh "$retry" "$tmp/tree/tests/cross/"
cat >"$tmp/tree/tests/cross/mkchroot.sh" <<EOF
#!/bin/bash
echo 99 >"$tmp/left"
ARCHIVE_TRIES=2 exec "\$(dirname "\$0")/archive-retry.sh" "mkchroot: \$2" "$tmp/flaky"
EOF
chmod +x "$tmp/tree/tests/cross/mkchroot.sh"
out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$tmp/tree" cross-check ARCH=i386 \
	CROSS_CACHE="$tmp/cache" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
	fail "make: make cross-check exited $rc where the archive stayed unreachable: $out"
elif [ "$(grep -c '^cross-check i386: SKIP: ' <<<"$out")" -ne 1 ] ||
	! grep -q '^cross-check i386: SKIP: no root of i386: the Debian archive stayed unreachable after 2 tries' <<<"$out"; then
	fail "make: no one line saying i386 was skipped and why: $out"
else
	ok "make: $(grep '^cross-check i386: SKIP: ' <<<"$out" | cut -c1-110)..."
fi

# The real mmdebstrap against a mirror that refuses connections, for the
# host's own architecture (no emulation, nothing registered).
if [ "$(id -u)" -ne 0 ]; then
	say "SKIP: mmdebstrap: needs root"
elif ! command -v mmdebstrap >/dev/null || ! command -v arch-test >/dev/null ||
	! command -v update-binfmts >/dev/null; then
	say "SKIP: mmdebstrap: mmdebstrap, arch-test or binfmt-support not installed (make cross-check's tools)"
elif ! mountpoint -q /proc/sys/fs/binfmt_misc; then
	say "SKIP: mmdebstrap: binfmt_misc is not mounted (mkchroot.sh would mount it; make cross-check does)"
else
	host=$(dpkg --print-architecture)
	out=$(MIRROR=http://127.0.0.1:9/debian ARCHIVE_TRIES=2 timeout 300 \
		tests/cross/mkchroot.sh sysroot "$host" "$tmp/root" bash 2>&1)
	rc=$?
	if [ $rc -ne 77 ]; then
		fail "mmdebstrap: mkchroot.sh exited $rc, want 77: $(tail -n 20 <<<"$out")"
	elif ! grep -q "^mkchroot: $host: SKIP: the Debian archive stayed unreachable after 2 tries .*127.0.0.1" <<<"$out"; then
		fail "mmdebstrap: no line saying the archive stayed unreachable: $(tail -n 20 <<<"$out")"
	elif [ -e "$tmp/root/.rngfeed-chroot" ]; then
		fail "mmdebstrap: a root marked ready after the archive failed"
	else
		ok "mmdebstrap: $(grep ': SKIP: ' <<<"$out" | cut -c1-140)..."
	fi
fi

[ "$failures" -eq 0 ] || { say "$failures failure(s)"; exit 1; }
exit 0
