# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Measuring a running daemon from outside (issue 28): what
# tests/test_credit_bound.sh, tests/test_faults.sh and the other scripts that
# start daemons share.  Sourced, not run:   . tests/lib_measure.sh
# (a script may define its own of any of these after it).
#
#   say TEXT                   TEXT on a line of its own
#   ok TEXT, fail TEXT         "ok: TEXT"; "FAIL: TEXT", counted in $failures
#   skip TEXT                  "SKIP: TEXT", then exit 77
#   need_feeder TEXT           skip with TEXT ("needs root (why)") unless
#                              root, and with a reason unless the process
#                              has CAP_SYS_ADMIN, which RNDADDENTROPY needs
#   need_built FILE...         FAIL and exit 1 unless each FILE is built
#   need_tools HINT TOOL...    skip unless each TOOL is installed (HINT: the
#                              packages that have them)
#   measure_need_shim BINARY   skip (exit 77) where the binary is built with
#                              ASan, which hides RNDADDENTROPY from the
#                              LD_PRELOAD shim; sets SHIM to an absolute path
#   measure_temp NAME          $tmp: a fresh directory, removed at exit with
#                              every PID listed in $tmp/pids, in the array
#                              pids or in pid stopped first (those still the
#                              test's: pid_ours, tests/lib_pids.sh)
#   "${SHIM_ENV[@]}" RNGFEED_SHIM_OUT=DIR/shim CMD...
#                              CMD with bench/shim.so preloaded, its record
#                              written to DIR/shim (a command, not a shell
#                              function: in the background, $! is CMD's own
#                              PID, env execs it)
#   shim DIR KEY               a key of that record (pid, calls, bytes,
#                              credited_bits), or empty
#   metric FILE NAME [SOURCE]  a value of the daemon's metrics file, or empty
#   credit_of DIR SOURCE       the credit the daemon's log (DIR/log) says it
#                              uses for SOURCE ("using it, credit N/1024")
#   beside NAME CMD...         CMD (a function, usually) in the background,
#                              beside the other parts so started: its
#                              output in $tmp/beside.NAME, its own failures
#                              its exit status, the daemons it lists (pid,
#                              pids) killed when it ends
#   beside_wait                each such part in the order started: waits
#                              for it, prints its report whole and adds its
#                              failures to $failures (none started is one:
#                              a name the script took for itself)
#   fips_by_chance FAILED TESTED
#                              true if FAILED failed FIPS 140-2 blocks of
#                              TESTED are what good random data gives by
#                              chance (about one block in a thousand): at
#                              most one in a hundred, at least one allowed
#   now                        seconds since the epoch, with nanoseconds
#   at DIR SECONDS             sleep until SECONDS after DIR/start's time
#   sigterm_wait PID           SIGTERM, then whichever ends first: the daemon
#                              or a 2-s watchdog (then SIGKILL); prints
#                              "exit RC SECONDS" or "hung"
#   problem TEXT               add TEXT to the current row's $row_fail
#   table_row WHO LOG N FIELD...
#                              the row FIELD...|$row_fail (or "ok") in
#                              $tmp/table; with a problem in $row_fail,
#                              "FAIL: WHO: ..." (counted in $failures) and
#                              the last N lines of LOG
#   check_cases                the script's check_case NAME LABEL for each
#                              of CASES (NAME|LABEL|...), each writing its
#                              row; then a failure unless all of them did
#   print_table COLUMN3 FILE   the rows of FILE (7 fields split by |) as the
#                              README catalogue's Markdown table
#   print_rows KIND FILE       the rows of FILE (4 fields split by |: fault,
#                              detected by, daemon state, "ok" or the
#                              problem) as that table, each fault headed
#                              "KIND: ", "-" in the credit and source columns

. tests/lib_pids.sh
SHIM=${SHIM:-bench/shim.so}
failures=0

say() { printf '%s\n' "$*"; }
ok() { say "ok: $*"; }
fail() { say "FAIL: $*"; failures=$((failures + 1)); }
skip() { say "SKIP: $*"; exit 77; }

need_feeder() {
	[ "$(id -u)" -eq 0 ] || skip "$1"
	# Root in a container lacks CAP_SYS_ADMIN by default: RNDADDENTROPY would fail.
	(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
		skip "root without CAP_SYS_ADMIN (a container's default; --cap-add SYS_ADMIN grants it): RNDADDENTROPY would fail"
}

need_built() {
	local f
	for f in "$@"; do
		[ -x "$f" ] || { say "FAIL: $f is not built"; exit 1; }
	done
}

need_tools() {
	local hint=$1 t
	shift
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "$t not installed ($hint)"
	done
}

measure_need_shim() {
	# Under make sanitize the daemon's ASan runtime takes ioctl() before
	# the shim can count it (the shim then reads 0 calls): these rows
	# run in make check only.
	if ldd "$1" 2>/dev/null | grep -q libasan; then
		echo "SKIP: $1 is built with ASan, which hides RNDADDENTROPY from the LD_PRELOAD shim these rows measure through (make check runs them)"
		exit 77
	fi
	[ -r "$SHIM" ] || { echo "FAIL: $SHIM is not built (make bench/shim.so)"; exit 1; }
	case $SHIM in /*) ;; *) SHIM=$PWD/$SHIM ;; esac
	SHIM_ENV=(env "LD_PRELOAD=$SHIM")
}

measure_cleanup() {
	local p
	# shellcheck disable=SC2154 # pids, pid: the sourcing script's, if any
	for p in $(cat "$tmp/pids" 2>/dev/null) ${pids[@]+"${pids[@]}"} ${pid:-}; do
		kill_ours "$p"
	done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && { echo "kept $tmp"; return; }
	rm -rf "$tmp"
}

measure_temp() {
	tmp=$(mktemp -d "/tmp/$1.XXXXXX") || exit 1
	: >"$tmp/pids"
	# A child that bash forked and that is killed before its exec runs
	# the script's traps (tests/test_traps.sh): the test of $BASHPID
	# keeps it from removing $tmp under the script, nearly always.
	trap '[ "$BASHPID" != $$ ] || measure_cleanup' EXIT
	trap 'exit 1' INT TERM
}

shim() {
	sed -n "s/.*\\b$2=\\([0-9-]*\\).*/\\1/p" "$1/shim" 2>/dev/null
}

metric() {
	local sel=$2
	[ $# -lt 3 ] || sel="$2{source=\"$3\"}"
	awk -v k="$sel" '$1 == k { print $2 }' "$1" 2>/dev/null
}

credit_of() {
	sed -nE "s/^rngfeed: $2: using it, credit ([0-9]+)\\/1024.*/\\1/p" "$1/log" | tail -n1
}

# Independent parts of a test side by side: a test that mostly waits (on
# timeouts, metrics writes, paced writers) takes the longest part's time,
# not the sum, and still reads as if run one after the other.
beside_pids=() beside_names=()
beside() {
	local name=$1
	shift
	(
		exec >"$tmp/beside.$name" 2>&1
		failures=0 pids=() pid= part=$BASHPID
		# shellcheck disable=SC2154 # pid, pids: set by what CMD starts
		trap '[ "$BASHPID" != "$part" ] || kill_ours ${pids[@]+"${pids[@]}"} ${pid:-}' EXIT
		trap 'exit 1' TERM
		"$@"
		exit $((failures > 255 ? 255 : failures))
	) &
	beside_pids+=($!)
	beside_names+=("$name")
	echo $! >>"$tmp/pids"
}
beside_wait() {
	local i
	[ ${#beside_pids[@]} -gt 0 ] || fail "beside_wait: no part was started"
	for i in "${!beside_pids[@]}"; do
		wait "${beside_pids[$i]}"
		failures=$((failures + $?))
		cat "$tmp/beside.${beside_names[$i]}"
	done
	beside_pids=() beside_names=()
}

# A 40-block sample of good data fails a block about one time in 25, so a
# test asking for none fails that often; a source that fails more than one
# block in a hundred is not good data.
fips_by_chance() { [ "${1:-1}" -le $(((${2:-0} + 99) / 100)) ]; }

now() { date +%s.%N; }

# wait_for SECONDS CMD...: poll every 50 ms until CMD succeeds; false if it
# never did within SECONDS (a bound, not a timed assertion).
wait_for() {
	local n=$(($1 * 20))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

at() {
	sleep "$(awk -v s="$(cat "$1/start")" -v t="$2" -v n="$(now)" \
		'BEGIN { d = s + t - n; print (d > 0 ? d : 0) }')"
}

sigterm_wait() {
	local pid=$1 t0 dog first rc comm
	t0=$(now)
	kill -TERM "$pid"
	sleep 2 >/dev/null 2>&1 &
	dog=$!
	wait -n -p first "$pid" "$dog"
	rc=$?
	if [ "$first" = "$dog" ]; then
		echo hung
		kill -KILL "$pid"
		wait "$pid"
	else
		# Not signalled before its exec: a child killed then still has
		# this script's traps and runs them, and the EXIT trap removed
		# $tmp under the script (test_pkcs11.sh, CI).  Left to end by
		# itself if it is not sleep yet.
		read -r comm <"/proc/$dog/comm"
		[ "$comm" != sleep ] || { kill "$dog"; wait "$dog"; }
		awk -v a="$t0" -v b="$(now)" -v rc="$rc" 'BEGIN { printf "exit %d %.2f\n", rc, b - a }'
	fi 2>/dev/null
}

problem() { row_fail+="${row_fail:+; }$*"; }

table_row() {
	local who=$1 log=$2 n=$3
	shift 3
	(IFS='|'; printf '%s\n' "$*|${row_fail:-ok}") >>"$tmp/table"
	if [ -n "$row_fail" ]; then
		failures=$((failures + 1))
		say "FAIL: $who: $row_fail"
		sed 's/^/    log| /' "$log" | tail -n "$n"
	fi
}

check_cases() {
	local rows
	: >"$tmp/table"
	for c in "${CASES[@]}"; do
		IFS='|' read -r name label _ <<<"$c"
		check_case "$name" "$label"
	done
	# A check that stopped half-way (a shell error) must not pass.
	rows=$(wc -l <"$tmp/table")
	if [ "$rows" -ne ${#CASES[@]} ]; then
		failures=$((failures + 1))
		say "FAIL: $rows rows checked of ${#CASES[@]}"
	fi
}

print_table() {
	echo "| fault | detected by | $1 | credited to the kernel (shim) <= bound | source state | daemon state | result |"
	echo "|---|---|---|---|---|---|---|"
	awk -F'|' '{ r = $7 == "ok" ? "PASS" : "FAIL: " $7
		printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, r }' "$2"
}

print_rows() {
	print_table "credited bits (faulty source)" \
		<(awk -F'|' -v k="$1" '{ print k ": " $1 "|" $2 "|-|-|-|" $3 "|" $4 }' "$2")
}
