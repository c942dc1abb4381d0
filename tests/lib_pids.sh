# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Stopping a test's own processes, and only those.  Sourced (from the top of
# the tree: . tests/lib_pids.sh; tests/lib_measure.sh sources it).
#
# A PID a test started and waited for long ago may belong to any process
# by the time its EXIT trap runs: pid_max is 32768 on some machines and the
# suite starts thousands of processes.  A blind kill of it may hit another
# test's shell, whose own trap then removes that test's files under its
# running cases, or another test's daemon.
#
#   pid_ours PID [DIR]   PID is still this test's: below this shell (a
#                        child, a child's child, ...), or with DIR given, a
#                        daemon that detached and has DIR in its command
#                        line or environment
#   kill_ours [-SIGNAL] PID...
#                        sends SIGNAL (TERM) to each PID still this test's
#                        (pid_ours, with $tmp as DIR when set); empty PIDs
#                        are skipped

pid_ours() {
	local q=$1 i
	[ -n "$1" ] && [ -e "/proc/$1" ] || return 1
	for ((i = 0; i < 64 && q > 1; i++)); do
		[ "$q" = "$$" ] && [ "$1" != "$$" ] && return 0
		q=$(awk '$1 == "PPid:" { print $2 }' "/proc/$q/status" 2>/dev/null)
		[ -n "$q" ] || return 1
	done
	[ -n "${2:-}" ] || return 1
	tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2" ||
		tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -qF -- "$2"
}

kill_ours() {
	local sig=-TERM p
	case ${1:-} in -*) sig=$1 && shift ;; esac
	for p in "$@"; do
		pid_ours "$p" "${tmp:-}" && kill "$sig" "$p" 2>/dev/null
	done
	return 0
}
