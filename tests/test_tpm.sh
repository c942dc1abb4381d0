#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Integration test of the tpm source against a real software TPM: swtpm
# serving TPM 2.0 on a unix socket in a temporary directory.  --raw gives
# exactly the bytes asked for, they pass rngtest, two reads differ, --list
# shows the source available; as root, the daemon feeds the kernel from
# it; with the simulator stopped, --raw fails with one clear line.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_tpm.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
failures=0
swtpm_pid=
daemon_pid=

need_tools "Debian packages swtpm, rng-tools5" swtpm rngtest
need_built "$RNGFEED"

tmp=$(mktemp -d) || exit 1
# Always stop what was started, by PID, whatever way the script ends.
cleanup() {
	[ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null
	[ -z "$swtpm_pid" ] || kill "$swtpm_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT


sock=$tmp/sock
dev="unix:$sock"

# ---- start the simulator -----------------------------------------------------

# not-need-init,startup-clear: swtpm runs TPM2_Startup(CLEAR) itself, so
# GetRandom works at once without a separate init over the control channel.
swtpm socket --tpm2 --server type=unixio,path="$sock" \
	--ctrl type=unixio,path="$tmp/ctrl" --tpmstate dir="$tmp" \
	--flags not-need-init,startup-clear >"$tmp/swtpm.log" 2>&1 &
swtpm_pid=$!
for _ in $(seq 50); do
	[ -S "$sock" ] && break
	kill -0 "$swtpm_pid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -S "$sock" ]; then
	echo "FAIL: swtpm did not create $sock: $(cat "$tmp/swtpm.log")"
	exit 1
fi

# ---- --list --------------------------------------------------------------------

line=$("$RNGFEED" --list -O tpm:device="$dev" | grep -E '^tpm ')
if grep -qE '^tpm +available ' <<<"$line"; then
	ok "--list: $line"
else
	fail "--list does not show tpm available: '$line'"
fi

# ---- --raw -----------------------------------------------------------------------

raw() { "$RNGFEED" -n tpm -O tpm:device="$dev" --raw --bytes "$1"; }

raw 100000 >"$tmp/a" 2>"$tmp/a.err"
rc=$?
size=$(stat -c %s "$tmp/a")
if [ $rc -eq 0 ] && [ "$size" -eq 100000 ]; then
	ok "--raw --bytes 100000 gave 100000 bytes"
else
	fail "--raw exited $rc with $size bytes: $(cat "$tmp/a.err")"
fi

# rngtest reads 4 bytes for its continuous test, then 39 whole blocks of
# 2,500 bytes.  Good random data fails a FIPS 140-2 block about 1 time in
# 1,250 (the four tests' false-alarm rates added up), so even a perfect
# source fails 1 block in 39 about 3 % of the time and 2 about 0.05 %; 3 or
# more would be about a 1-in-200,000 event for good data; a broken source
# fails nearly every block.
rngtest <"$tmp/a" >"$tmp/rngtest.out" 2>&1
passed=$(sed -nE 's/.*FIPS 140-2 successes: ([0-9]+).*/\1/p' "$tmp/rngtest.out")
failed=$(sed -nE 's/.*FIPS 140-2 failures: ([0-9]+).*/\1/p' "$tmp/rngtest.out")
if [ -z "$passed" ] || [ -z "$failed" ]; then
	fail "rngtest printed no counts: $(cat "$tmp/rngtest.out")"
elif [ $((passed + failed)) -ne 39 ] || [ "$failed" -gt 2 ]; then
	fail "rngtest: $passed blocks passed, $failed failed (want 39, <= 2 failed)"
else
	ok "rngtest: $passed of 39 blocks passed, $failed failed"
fi

raw 100000 >"$tmp/b" 2>"$tmp/b.err"
if cmp -s "$tmp/a" "$tmp/b"; then
	fail "two reads gave the same 100000 bytes"
elif [ "$(stat -c %s "$tmp/b")" -ne 100000 ]; then
	fail "second --raw: $(cat "$tmp/b.err")"
else
	ok "a second read differs from the first"
fi

# An odd size, smaller than one GetRandom: exactly that many bytes.
n=$(raw 37 2>"$tmp/c.err" | wc -c)
[ "$n" -eq 37 ] && ok "--raw --bytes 37 gave 37 bytes" ||
	fail "--raw --bytes 37 gave $n bytes: $(cat "$tmp/c.err")"

# ---- the daemon, feeding the kernel ------------------------------------------------

# RNDADDENTROPY needs root.  credit=1024 only so that one 2,500-byte block
# carries enough credit (20,000 bits) for a 256-bit reseed within seconds;
# the default, 64/1024, gives 1,250 bits a block and works as well.  (A
# software TPM on this host is the kernel's own output at one remove: it is
# credited here to test the pipeline, not because it earns it.)
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: the daemon part: not root (RNDADDENTROPY needs root)"
elif ! (( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )); then
	echo "SKIP: the daemon part: root without CAP_SYS_ADMIN (a container's default): RNDADDENTROPY would fail"
else
	metrics=$tmp/metrics.prom
	"$RNGFEED" -f -n tpm -O tpm:device="$dev" -O tpm:credit=1024 \
		--metrics "$metrics" >"$tmp/daemon.out" 2>&1 &
	daemon_pid=$!
	metric() {
		sed -nE "s/^$1 ([0-9]+)\$/\\1/p" "$metrics" 2>/dev/null
	}
	# A claimed credit (1024, above the driver's 64) is 0 until the
	# source's first full assessment, which comes after 26 blocks and
	# late on a loaded machine: wait for the first feed (the metrics are
	# written every 5 s), bounded, then stop and read the last ones.
	until_s=$((SECONDS + 120))
	sleep 4
	while fed=$(metric rngfeed_fed_bytes_total); [ "${fed:-0}" = 0 ] && [ $SECONDS -lt $until_s ] &&
		kill -0 "$daemon_pid" 2>/dev/null; do
		sleep 0.5
	done
	kill "$daemon_pid" 2>/dev/null
	wait "$daemon_pid"
	rc=$?
	daemon_pid=
	blocks=$(metric 'rngfeed_source_blocks_passed_total\{source="tpm"\}')
	fed=$(metric rngfeed_fed_bytes_total)
	if [ "${blocks:-0}" -gt 0 ] && [ "${fed:-0}" -gt 0 ]; then
		ok "daemon: tpm passed $blocks blocks, $fed bytes fed to the kernel"
	else
		fail "daemon (exit $rc): blocks passed '${blocks}', fed '${fed}'"
		sed 's/^/    daemon| /' "$tmp/daemon.out"
	fi
fi

# ---- the simulator gone ------------------------------------------------------------

kill "$swtpm_pid"
wait "$swtpm_pid" 2>/dev/null
swtpm_pid=
raw 1000 >"$tmp/dead" 2>"$tmp/dead.err"
rc=$?
lines=$(wc -l <"$tmp/dead.err")
if [ $rc -ne 0 ] && [ ! -s "$tmp/dead" ] && [ "$lines" -eq 1 ] &&
	grep -q "$sock" "$tmp/dead.err"; then
	ok "dead socket: exit $rc, '$(cat "$tmp/dead.err")'"
else
	fail "dead socket: exit $rc, $(stat -c %s "$tmp/dead") bytes out," \
		"message: '$(cat "$tmp/dead.err")'"
fi

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
exit 0
