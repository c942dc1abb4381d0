#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exit codes and messages a newcomer meets (issue 18 item 5): bad usage
# exits 2 with one line and one hint (-o /dev/null, -r /dev/urandom,
# -D no-such-user, -n nosuch); "1 block passed"; the summary says what its
# two credit figures are; a --stdout run prints nothing on stderr for the
# shared hw_random device.  On the old code -D exited 1, -n nosuch gave
# two hints, the summary said "1 blocks passed" and --stdout printed
# "hwrng: not used".
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_messages.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
failures=0
tmp=$(mktemp -d /tmp/test_messages.XXXXXX) || exit 1
# Credited regular files are read through the file ledger: a private one.
export STATE_DIRECTORY="$tmp/state"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built"; exit 1; }

usage() { # WHAT ARGS...: exit 2, one line, one hint
	local what=$1 rc
	shift
	timeout $((10 * SCALE)) "$RNGFEED" -c /dev/null "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 2 ]; then
		fail "$what: exit $rc, want 2 (bad usage): $(head -c 300 "$tmp/err")"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		fail "$what: $(wc -l <"$tmp/err") lines on stderr, want 1: $(cat "$tmp/err")"
	elif [ "$(grep -o '(see rngfeed' "$tmp/err" | wc -l)" -gt 1 ]; then
		fail "$what: two hints: $(cat "$tmp/err")"
	else
		ok "$what: exit 2, $(cat "$tmp/err")"
	fi
}
usage "-o /dev/null" -f -n rdrand -o /dev/null
usage "-r /dev/urandom" -f -r /dev/urandom
usage "-D no-such-user" -f -n rdrand -D no-such-user-here
usage "-D nobody:no-such-group" -f -n rdrand -D nobody:no-such-group-here
usage "-n nosuch" -f -n nosuch
grep -q -- '--list' "$tmp/err" || fail "-n nosuch: the hint should point at --list: $(cat "$tmp/err")"

# One tested block from a regular file (read once): "1 block passed", and
# what each credit figure means.  -t feeds nothing.
head -c 2500 /dev/urandom >"$tmp/one.bin"
"$RNGFEED" -c /dev/null -t -n file -O file:device="$tmp/one.bin" -O file:credit=512 \
	--stats-interval 60 >/dev/null 2>"$tmp/sum" &
pid=$!
for ((i = 0; i < 50 * SCALE; i++)); do
	grep -q 'finished\|end of input\|read once' "$tmp/sum" && break
	sleep 0.1
done
sleep 1
kill -TERM "$pid"
wait "$pid"
line=$(grep -E '^rngfeed:   file: ' "$tmp/sum")
case "$line" in
*" 1 block passed, 0 failed"*) ok "singular: ${line:0:60}..." ;;
*" 0 blocks passed, 1 failed"*) echo "SKIP: singular: the one random block failed a test (rare)" ;;
*) fail "summary for one block: '$line'" ;;
esac
[[ "$line" == *"credit bits (what its passed blocks carried)"* ]] ||
	fail "the per-source credit figure does not say what it is: '$line'"
grep -qE "^rngfeed:   would have fed [0-9]+ bytes crediting [0-9]+ bits \(the kernel's credit: " "$tmp/sum" ||
	fail "the kernel's credit figure does not say what it is: $(grep 'crediting' "$tmp/sum")"

# --stdout: the shared-device note is for runs that feed the kernel.
if "$RNGFEED" -c /dev/null --list 2>/dev/null | grep -q 'is read by the virtio source already'; then
	"$RNGFEED" -c /dev/null --stdout --bytes 64 >/dev/null 2>"$tmp/stdout.err"
	if grep -q 'not used' "$tmp/stdout.err"; then
		fail "--stdout prints: $(cat "$tmp/stdout.err")"
	else
		ok "--stdout: no 'not used' note on stderr"
	fi
else
	echo "SKIP: --stdout note: hwrng and virtio do not share a device here"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
exit 0
