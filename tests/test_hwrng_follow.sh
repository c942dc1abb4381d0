#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# Issue 26: the hand-over follows hw_random devices that register, leave
# and become current after start-up.  The daemon reads the real /dev/hwrng
# but its hw_random directory is a fixture (-O hwrng:sysfs=DIR: rng_current,
# rng_available, rng_quality as files), so the machine's rng_quality is
# never touched and the test plays the kernel:
#   1. started with no device (and without --wait-for-source), it keeps
#      the hwrng source and waits for one;
#   2. a device registers and becomes current: its rng_quality reads 0
#      soon (on a uevent at once, else when the daemon wakes: here every
#      second, --interval 1; the test waits 5 s and
#      prints how long it took), and the log says so once;
#   3. a TPM registers and wins the kernel's election (6.12 gives it
#      1024): the device read before is made current again;
#   4. that device leaves, the TPM alone is current: taken;
#   5. the TPM leaves: said, nothing written;
#   6. one registers again: taken;
#   7. the kernel sets its quality again (6.2-6.10 on a select, any kernel
#      on a new registration): 0 again;
#   8. SIGTERM: its value is put back, the lock beside the fixture gone;
#   9. a TPM current and a virtio-rng registered at start: the virtio-rng
#      is made current, unless rng_selected says the TPM was chosen.
# Fails on the code before (the gate was taken once, at start-up).
set -u
RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	[ -s "${log:-}" ] && sed 's/^/    /' "$log"
	exit 1
}

[ "$(id -u)" -eq 0 ] || skip "reading /dev/hwrng needs root"
[ -c /dev/hwrng ] || skip "no /dev/hwrng (no hw_random core)"
head -c 16 /dev/hwrng >/dev/null 2>&1 || skip "/dev/hwrng cannot be read (no hw_random device)"

tmp=$(mktemp -d) || exit 1
. tests/lib_pids.sh
fx=$tmp/sysfs
mkdir "$fx"
log=$tmp/log
pid=''
cleanup() {
	if [ -n "$pid" ]; then
		kill_ours -KILL "$pid"
		{ wait "$pid"; } 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT

# The kernel, played: what it shows after a change.
kernel() { # CURRENT AVAILABLE [QUALITY]
	[ $# -ge 3 ] && echo "$3" >"$fx/rng_quality"
	echo "$2" >"$fx/rng_available"
	echo "$1" >"$fx/rng_current"
}
echo 0 >"$fx/rng_selected"
kernel none "none " 0

# Wait until $1 holds (checked every 50 ms) for at most $2 s (scaled);
# the seconds it took in $took.
within() {
	local start end
	start=$(date +%s.%N)
	for _ in $(seq $((${2%.*} * 20 * SCALE))); do
		if eval "$1"; then
			end=$(date +%s.%N)
			took=$(echo "$end - $start" | bc)
			return 0
		fi
		sleep 0.05
	done
	return 1
}
q() { cat "$fx/rng_quality"; }

RUNTIME_DIRECTORY=$tmp/run "$RNGFEED" -f -v -n hwrng -O "hwrng:sysfs=$fx" \
	--interval 1 2>"$log" &
pid=$!
within 'grep -q "hwrng: .*looking for it" "$log"' 10 ||
	fail "1: no 'looking for it' from the hwrng source"
kill -0 "$pid" 2>/dev/null || fail "1: the daemon stopped with no hw_random device"
echo "ok: 1. started with no hw_random device, it waits for one"

kernel virtio_rng.0 "virtio_rng.0 none " 1000
within '[ "$(q)" = 0 ]' 5 || fail "2: a device registered, rng_quality reads $(q) after 5 s"
echo "ok: 2. virtio_rng.0 arrived: handed over in $took s"
within 'grep -q "handed over" "$log"' 5 || fail "2: the log does not say it"

# (rng_quality is the current device's: the TPM's 1024 shows only once
# it is current, and virtio_rng.0 keeps its 0.)
kernel tpm-rng-0 "virtio_rng.0 tpm-rng-0 none "
within '[ "$(cat "$fx/rng_current")" = virtio_rng.0 ]' 5 ||
	fail "3: a TPM won the election, rng_current is $(cat "$fx/rng_current") after 5 s"
echo "ok: 3. tpm-rng-0 registered and became current: virtio_rng.0 current again in $took s"
within 'grep -q "tpm-rng-0 became current; virtio_rng.0 made current again" "$log"' 5 ||
	fail "3: the log does not say it"
[ "$(q)" = 0 ] || fail "3: virtio_rng.0's rng_quality reads $(q)"

kernel tpm-rng-0 "tpm-rng-0 none " 1024
within '[ "$(q)" = 0 ]' 5 || fail "4: virtio_rng.0 left, the TPM's rng_quality reads $(q) after 5 s"
echo "ok: 4. virtio_rng.0 left, tpm-rng-0 alone: handed over in $took s"
within 'grep -q "virtio_rng.0 left.*now tpm-rng-0" "$log"' 5 ||
	fail "4: the log does not say the device changed"
[ "$(grep -c "virtio_rng.0 left" "$log")" = 1 ] || fail "4: the change is logged more than once"

kernel none "none "
within 'grep -q "tpm-rng-0 left" "$log"' 5 || fail "5: the TPM left, nothing said within 5 s"
echo "ok: 5. tpm-rng-0 left: said in $took s"

kernel virtio_rng.1 "virtio_rng.0 virtio_rng.1 none " 1000
within '[ "$(q)" = 0 ]' 5 || fail "6: a device registered again, rng_quality reads $(q) after 5 s"
echo "ok: 6. virtio_rng.1 arrived: handed over in $took s"

echo 900 >"$fx/rng_quality"
within '[ "$(q)" = 0 ]' 5 || fail "7: the kernel reset the quality, it reads $(q) after 5 s"
within 'grep -q "set the quality of virtio_rng.1 to 900 again" "$log"' 5 ||
	fail "7: the log does not say the kernel reset it"
echo "ok: 7. the kernel set virtio_rng.1's quality again: 0 again in $took s"

kill -TERM "$pid"
{ wait "$pid"; } 2>/dev/null
rc=$?
pid=''
[ "$rc" = 0 ] || fail "8: the daemon exited $rc after SIGTERM"
[ "$(q)" = 900 ] || fail "8: after SIGTERM rng_quality reads $(q), not 900"
[ ! -e "$fx/rngfeed-hwrng.lock" ] || fail "8: the lock is still there"
grep -q "virtio_rng.1 handed back" "$log" || fail "8: the hand-back is not said"
echo "ok: 8. stopped: virtio_rng.1 handed back at 900"

# 9. Two devices at start, a TPM current (6.12 gives it 1024 against
# virtio's 1000): the other is made current, unless chosen explicitly.
two_devices() { # RNG_SELECTED
	rm -f "$log"
	echo "$1" >"$fx/rng_selected"
	kernel tpm-rng-0 "tpm-rng-0 virtio_rng.0 none " 1024
	RUNTIME_DIRECTORY=$tmp/run "$RNGFEED" -f -v -n hwrng -O "hwrng:sysfs=$fx" \
		--interval 1 2>"$log" &
	pid=$!
	within 'grep -qE "hwrng: (using it|.*looking for it)" "$log"' 20 ||
		fail "9: the daemon did not start on hwrng"
	kill -TERM "$pid"
	{ wait "$pid"; } 2>/dev/null
	pid=''
}
two_devices 0
[ "$(cat "$fx/rng_current")" = virtio_rng.0 ] ||
	fail "9: with a TPM current and virtio_rng.0 registered, rng_current is $(cat "$fx/rng_current")"
grep -q "virtio_rng.0 made current instead of tpm-rng-0" "$log" || fail "9: the choice is not said"
two_devices 1
[ "$(cat "$fx/rng_current")" = tpm-rng-0 ] ||
	fail "9: the administrator chose tpm-rng-0 (rng_selected 1), rng_current is $(cat "$fx/rng_current")"
echo "ok: 9. a TPM and virtio_rng.0: virtio_rng.0 made current; left alone when chosen explicitly"
echo "PASS: the hand-over follows devices that register, leave and become current after start-up"
