# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Is the machine's hw_random hand-over owned by an rngfeed outside the test
# (a running service, or make check-beside's instance)?  Sourced, not run:
#   . tests/lib_handover.sh
#
#   handover_elsewhere   true while a process holds the one-owner lock
#                        (include/rngfeed/hwrng_lock.h: an open-file-
#                        description write lock on byte 0 of
#                        /run/rngfeed/hwrng.lock, whatever that instance's
#                        RUNTIME_DIRECTORY); $HANDOVER_WHY says so in words
#   handover_waited LOG  true when the daemon's LOG says it found that
#                        other owner and credits the device 0 meanwhile
#
# A script that takes the hand-over runs alone (# run-tests: alone): asked
# while none of its own daemons runs, the owner is another instance.  Beside
# one, a daemon of the test credits the device 0 until that one stops: a
# part that needs the device's credit prints "SKIP: reason" instead, and
# still checks what it can (nothing credited, the log saying why).
# (HANDOVER_LOCK: the lock's path, for tests/test_run_tests.sh's stand-in.)

HANDOVER_LOCK=${HANDOVER_LOCK:-/run/rngfeed/hwrng.lock}
# shellcheck disable=SC2034 # read by the scripts that source this
HANDOVER_WHY="another rngfeed owns the machine's hw_random hand-over ($HANDOVER_LOCK is locked: a running service?), so this test's daemon credits the device 0 until that one stops"

handover_elsewhere() {
	local id
	[ -e "$HANDOVER_LOCK" ] || return 1
	# /proc/locks names a file by its device (hex major:minor) and inode:
	# "N: OFDLCK ADVISORY WRITE -1 MAJ:MIN:INODE 0 0" for the owner.
	id=$(stat -c '%Hd %Ld %i' "$HANDOVER_LOCK" 2>/dev/null |
		awk '{ printf "%02x:%02x:%s", $1, $2, $3 }') || return 1
	[ -n "$id" ] || return 1
	awk -v id="$id" '$2 == "OFDLCK" && $4 == "WRITE" && $6 == id && $7 == 0 { f = 1 }
		END { exit !f }' /proc/locks
}

handover_waited() {
	grep -q 'another rngfeed owns the hand-over' "$1" 2>/dev/null
}
