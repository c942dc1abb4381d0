#!/bin/bash
# run-tests: alone (a daemon in a private /dev sees the machine's hw_random in /sys)
# SPDX-License-Identifier: GPL-2.0-or-later
# A newcomer's container: what rngfeed says where a container (or a
# unit) withholds what it needs, each message naming what is missing and
# the fix, none contradicting another.
#   1. Locked memory: without CAP_IPC_LOCK and with `ulimit -l 0` (a
#      container; systemd-nspawn refuses mlock itself) the start fails with one line naming the
#      lock, CAP_IPC_LOCK, LimitMEMLOCK=, `ulimit -l` and
#      --allow-unlocked-memory; with that option (command line or config
#      file) it runs, warns once, and holds no locked memory.  On the old
#      code: "cannot set up the CTR_DRBG: Cannot allocate memory", no way on.
#   2. A /dev without hwrng while /sys shows the kernel's hw_random device
#      (a private /dev): the daemon says hwrng is unavailable there and why,
#      never then "hwrng: using it", and takes no hand-over of a device it
#      cannot read.  On the old code: "unavailable", then "using it".
#   3. Root without CAP_SYS_ADMIN switching to -D nobody: told the
#      capability is missing and how a container grants it, not "run as
#      root"; without CAP_SETUID, told CAP_SETUID, not only "Operation not
#      permitted".
# Run from the top of the tree, as root: RNGFEED=./rngfeed bash tests/test_container.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
need_built "$RNGFEED"
[ "$(id -u)" -eq 0 ] || skip "needs root (capabilities to drop, a private /dev)"
command -v setpriv >/dev/null || skip "setpriv not installed (util-linux)"
"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available' ||
	skip "no RDRAND here (every case runs the daemon on it)"

measure_temp test_container
RNGFEED=$(realpath "$RNGFEED")

# WHAT FILE NEEDLE...: FILE holds every NEEDLE (fixed strings)
has_all() {
	local what=$1 file=$2 n
	shift 2
	for n in "$@"; do
		grep -qF -- "$n" "$file" || { fail "$what: no '$n' in: $(head -c 600 "$file")"; return 1; }
	done
}

# Waits (bounded) until FILE has a line matching the extended regex.
wait_for_line() {
	local file=$1 re=$2
	for _ in $(seq $((200 * SCALE))); do
		grep -qE -- "$re" "$file" && return 0
		sleep 0.05
	done
	return 1
}

# --- 1. locked memory -------------------------------------------------------------
# AddressSanitizer makes mlock() a no-op (make sanitize sets
# RNGFEED_SANITIZED): nothing is refused to lock there, so the part is
# skipped, saying so.
if [ -n "${RNGFEED_SANITIZED:-}" ]; then
	echo "SKIP: locked memory: mlock() is a no-op under AddressSanitizer"
else
# setpriv takes CAP_IPC_LOCK away (bounding and inheritable sets, so the
# exec as root does not get it back); ulimit -l 0 leaves mlock nothing.
# shellcheck disable=SC2016 # expanded by the inner shell
nolock=(setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock
	bash -c 'ulimit -l 0 && exec "$@"' nolock)
timeout $((10 * SCALE)) "${nolock[@]}" "$RNGFEED" -c /dev/null -f -t -n rdrand >"$tmp/lock.out" 2>"$tmp/lock.err"
rc=$?
if [ $rc -ne 1 ]; then
	fail "no CAP_IPC_LOCK, ulimit -l 0: exit $rc, want 1: $(head -c 300 "$tmp/lock.err")"
elif [ "$(grep -c '' "$tmp/lock.err")" -ne 1 ]; then
	fail "no CAP_IPC_LOCK, ulimit -l 0: $(grep -c '' "$tmp/lock.err") lines, want 1: $(cat "$tmp/lock.err")"
elif has_all "no CAP_IPC_LOCK, ulimit -l 0" "$tmp/lock.err" "cannot lock" "in RAM" \
	"CAP_IPC_LOCK" "0 KiB" "ulimit -l" "LimitMEMLOCK=" "--allow-unlocked-memory"; then
	ok "no CAP_IPC_LOCK, ulimit -l 0: exit 1, $(cut -c1-140 "$tmp/lock.err")..."
fi

# Accepted: from the command line, then from a config file; the daemon
# runs (a tested block instantiates the DRBG), warns, and locks nothing.
printf 'allow-unlocked-memory = yes\n' >"$tmp/unlocked.conf"
for how in cli conf; do
	if [ $how = cli ]; then args=(-c /dev/null --allow-unlocked-memory); else args=(-c "$tmp/unlocked.conf"); fi
	"${nolock[@]}" "$RNGFEED" "${args[@]}" -f -t -v -n rdrand --stats-interval 600 \
		>/dev/null 2>"$tmp/unlocked-$how.err" &
	pid=$!
	echo "$pid" >>"$tmp/pids" # stopped at exit, whatever happens
	if ! wait_for_line "$tmp/unlocked-$how.err" 'CTR_DRBG instantiated'; then
		fail "allowed unlocked ($how): no DRBG within $((10 * SCALE)) s: $(head -c 400 "$tmp/unlocked-$how.err")"
	else
		locked=$(awk '$1 == "VmLck:" { print $2 }' "/proc/$pid/status")
		if [ "${locked:-x}" != 0 ]; then
			fail "allowed unlocked ($how): VmLck is '${locked:-?}' kB, want 0"
		elif [ "$(grep -c 'not locked in RAM' "$tmp/unlocked-$how.err")" -ne 1 ]; then
			fail "allowed unlocked ($how): want one warning, got: $(grep -i 'lock' "$tmp/unlocked-$how.err")"
		else
			ok "allowed unlocked ($how): runs, VmLck 0 kB, $(grep 'not locked in RAM' "$tmp/unlocked-$how.err" | cut -c1-100)..."
		fi
	fi
	if kill -0 "$pid" 2>/dev/null; then
		sigterm_wait "$pid" >"$tmp/unlocked-$how.stop"
		grep -q '^exit 0 ' "$tmp/unlocked-$how.stop" ||
			fail "allowed unlocked ($how): '$(cat "$tmp/unlocked-$how.stop")' after SIGTERM, want exit 0"
	else
		wait "$pid"
		fail "allowed unlocked ($how): the daemon ended by itself (exit $?)"
	fi
done
fi

# --- 2. a /dev without hwrng -------------------------------------------------------
# A private mount namespace whose /dev holds only what the daemon needs
# besides a source: the kernel's /sys still shows its hw_random device.
if ! command -v unshare >/dev/null; then
	say "SKIP: /dev without hwrng: unshare not installed (util-linux)"
elif [ ! -d /sys/class/misc/hw_random ]; then
	say "SKIP: /dev without hwrng: no hw_random class in /sys (rng_core not loaded)"
else
	mkdir "$tmp/dev" "$tmp/rt"
	# shellcheck disable=SC2016 # expanded by the inner shell
	RUNTIME_DIRECTORY=$tmp/rt timeout -s INT $((15 * SCALE)) unshare -m bash -c '
		d=$1; shift
		mount -t tmpfs rngfeed-test "$d" || exit 90
		for n in null zero random urandom; do
			: >"$d/$n" && mount --bind "/dev/$n" "$d/$n" || exit 91
		done
		mount --rbind "$d" /dev || exit 92
		exec "$@"' nodev "$tmp/dev" "$RNGFEED" -c /dev/null -f -v >"$tmp/nodev.out" 2>"$tmp/nodev.err" &
	pid=$!
	echo "$pid" >>"$tmp/pids"
	if ! wait_for_line "$tmp/nodev.err" 'CTR_DRBG instantiated|no usable entropy source|^rngfeed: (hwrng|rdrand): using it'; then
		fail "/dev without hwrng: the daemon did not start: $(head -c 400 "$tmp/nodev.err")"
	fi
	sleep 0.5
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	hw=$(grep '^rngfeed: hwrng: ' "$tmp/nodev.err")
	if [ $rc -ge 90 ] && [ $rc -le 92 ]; then
		say "SKIP: /dev without hwrng: cannot make a private /dev here (step $rc)"
	elif grep -q '^rngfeed: hwrng: using it' "$tmp/nodev.err"; then
		fail "/dev without hwrng: it says it uses hwrng: $hw"
	elif grep -q 'handed over' "$tmp/nodev.err"; then
		fail "/dev without hwrng: it took the hand-over of a device it cannot read: $(grep 'handed over' "$tmp/nodev.err")"
	elif ! [[ "$hw" == *"hwrng: unavailable: cannot open /dev/hwrng"*"this /dev has no node for it"* ]]; then
		fail "/dev without hwrng: hwrng lines: '${hw:-none}'"
	else
		ok "/dev without hwrng: ${hw#rngfeed: }"
	fi
fi

# --- 3. capabilities for -D ----------------------------------------------------------
# Root without CAP_SYS_ADMIN switching user: the feed fails, and the
# message says which capability root lacks (not "run as root").
timeout $((10 * SCALE)) setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin \
	"$RNGFEED" -c /dev/null -f -n rdrand -D nobody >/dev/null 2>"$tmp/admin.err"
line=$(grep -m1 'RNDADDENTROPY' "$tmp/admin.err")
if [[ "$line" == *"Function not implemented"* ]]; then
	say "SKIP: -D nobody without CAP_SYS_ADMIN: RNDADDENTROPY is not implemented here (qemu-user)"
elif [[ "$line" == *"CAP_SYS_ADMIN is missing"*"--cap-add SYS_ADMIN"* ]] &&
	[[ "$line" != *"run as root"* ]]; then
	ok "-D nobody as root without CAP_SYS_ADMIN: ${line#*: }"
else
	fail "-D nobody as root without CAP_SYS_ADMIN is told: '${line:-$(head -n1 "$tmp/admin.err")}'"
fi
# Without CAP_SETUID (or CAP_SETGID) the switch cannot happen: said
# before anything is dropped, naming the capability.
for cap in setuid setgid; do
	timeout $((10 * SCALE)) setpriv --bounding-set=-$cap --inh-caps=-$cap \
		"$RNGFEED" -c /dev/null -f -n rdrand -D nobody >/dev/null 2>"$tmp/$cap.err"
	rc=$?
	line=$(head -n1 "$tmp/$cap.err")
	CAP=CAP_${cap^^}
	if [ $rc -ne 1 ] || [ "$(grep -c '' "$tmp/$cap.err")" -ne 1 ]; then
		fail "-D nobody without $CAP: exit $rc, $(cat "$tmp/$cap.err")"
	elif [[ "$line" == *"needs $CAP"*"which this process lacks"* ]]; then
		ok "-D nobody without $CAP: ${line#rngfeed: }"
	else
		fail "-D nobody without $CAP is told: '$line'"
	fi
done

[ "$failures" -eq 0 ] || { say "$failures failure(s)"; exit 1; }
exit 0
