#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
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
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
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
[[ "$line" == *"bits of entropy deposited in the DRBG"* ]] ||
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

# Root without CAP_SYS_ADMIN (a container's default): told the capability
# is missing and how a container grants it, not "run as root".
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: root without CAP_SYS_ADMIN: needs root and setpriv"
elif ! "$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available'; then
	echo "SKIP: root without CAP_SYS_ADMIN: no rdrand here"
else
	timeout $((10 * SCALE)) setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin \
		"$RNGFEED" -c /dev/null -f -n rdrand >/dev/null 2>"$tmp/nocap.err"
	line=$(grep -m1 'RNDADDENTROPY' "$tmp/nocap.err")
	if [[ "$line" == *"Function not implemented"* ]]; then
		# qemu-user (make cross-check) implements no RNDADDENTROPY.
		echo "SKIP: root without CAP_SYS_ADMIN: RNDADDENTROPY is not implemented here (qemu-user): $line"
	elif [[ "$line" == *"CAP_SYS_ADMIN is missing"*"--cap-add SYS_ADMIN"* ]] &&
		[[ "$line" != *"run as root"* ]]; then
		ok "root without CAP_SYS_ADMIN: ${line#*: }"
	else
		fail "root without CAP_SYS_ADMIN is told: '${line:-nothing}'"
	fi
fi

# --egd-only feeds no kernel: its summary has no kernel line.
if "$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available'; then
	timeout -s TERM $((2 * SCALE)) "$RNGFEED" -c /dev/null --egd-only \
		--egd-server "unix:$tmp/egd.sock" -n rdrand >/dev/null 2>"$tmp/egd.err"
	if ! grep -q 'summary after' "$tmp/egd.err"; then
		fail "--egd-only: no summary: $(tail -3 "$tmp/egd.err")"
	elif grep -qE 'fed [0-9]+ bytes|crediting' "$tmp/egd.err"; then
		fail "--egd-only's summary has a kernel line: $(grep -E 'fed [0-9]+ bytes|crediting' "$tmp/egd.err")"
	else
		ok "--egd-only: no kernel line in the summary"
	fi
else
	echo "SKIP: --egd-only summary: no rdrand here"
fi

# -t rate lines: between two estimates the window holds more than the last
# estimate covered, and the line says so (rdseed's "over 2500 samples"
# looked stuck beside rdrand's growing count).
src=
for s in rdseed rdrand; do
	"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE "^$s +available" && { src=$s; break; }
done
if [ -z "$src" ]; then
	echo "SKIP: rate line: neither rdseed nor rdrand here"
else
	timeout -s INT $((4 * SCALE)) "$RNGFEED" -c /dev/null -t -n "$src" \
		--stats-interval 1 >/dev/null 2>"$tmp/rate.err"
	line=$(grep -E "^rngfeed: $src: .*blocks ([2-7]|1[0-9]|2[0-5]) passed" "$tmp/rate.err" | head -n1)
	if [ -z "$line" ]; then
		echo "SKIP: rate line: $src gave no line with 2 to 25 blocks passed in $((4 * SCALE)) s"
	elif [[ "$line" =~ over\ ([0-9]+)\ samples.*the\ window\ holds\ ([0-9]+)\ samples\ now ]] &&
		[ "${BASH_REMATCH[2]}" -gt "${BASH_REMATCH[1]}" ]; then
		ok "rate line: estimate over ${BASH_REMATCH[1]} samples, window ${BASH_REMATCH[2]}"
	elif [[ "$line" =~ blocks\ ([0-9]+)\ passed.*over\ ([0-9]+)\ samples ]] &&
		[ "${BASH_REMATCH[2]}" -eq $((BASH_REMATCH[1] * 2500)) ] &&
		[[ "$line" != *"the window holds"* ]]; then
		# The estimate was just made (at 1, 2, 4, 8, 16, 26 blocks) over
		# every sample the window holds: nothing more to say.
		ok "rate line: estimate fresh over the whole window (${BASH_REMATCH[2]} samples)"
	else
		fail "rate line does not say what the window holds: '$line'"
	fi
fi

# --restore-hwrng-quality without a record says where it looked ($RUNTIME_DIRECTORY
# when set, as --help says); exit 0.
out=$(RUNTIME_DIRECTORY="$tmp/rt" "$RNGFEED" -c /dev/null --restore-hwrng-quality 2>&1)
rc=$?
if [ $rc -eq 0 ] && [[ "$out" == *"no hand-over record in $tmp/rt/hwrng-quality"* ]]; then
	ok "--restore-hwrng-quality without a record: ${out#rngfeed: }"
elif [ $rc -eq 0 ] && [[ "$out" == *"another rngfeed owns the hand-over"* ]]; then
	# A service (or another test's daemon) holds the machine's gate:
	# the restore rightly leaves it alone, and cannot say the other thing.
	echo "SKIP: --restore-hwrng-quality without a record: ${out#rngfeed: }"
else
	fail "--restore-hwrng-quality without a record: exit $rc, '$out'"
fi
grep -qF '$RUNTIME_DIRECTORY/hwrng-quality' "$tmp/help" 2>/dev/null ||
	"$RNGFEED" --help | grep -qF '$RUNTIME_DIRECTORY/hwrng-quality' ||
	fail "--help does not say the record goes to \$RUNTIME_DIRECTORY"

# --list where /sys shows a hw_random device but /dev has no node for it
# (a container): the kernel line says so, beside "cannot open /dev/hwrng".
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null ||
	! (( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )); then
	echo "SKIP: --list without /dev/hwrng: needs root with CAP_SYS_ADMIN and unshare (a private /dev)"
elif [ ! -e /sys/class/misc/hw_random/rng_current ] ||
	grep -qx none /sys/class/misc/hw_random/rng_current; then
	echo "SKIP: --list without /dev/hwrng: no hw_random device in /sys"
else
	: >"$tmp/empty.conf"
	unshare -m bash -c 'mount -t tmpfs h27 /dev && exec "$0" -c "$1" --list' \
		"$RNGFEED" "$tmp/empty.conf" >"$tmp/nodev.list" 2>&1
	line=$(grep '^hw_random:' "$tmp/nodev.list")
	if [[ "$line" == *"this /dev has no hw_random node"* ]]; then
		ok "--list without /dev/hwrng: ${line:0:100}..."
	else
		fail "--list without /dev/hwrng: '$line'"
	fi
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
exit 0
