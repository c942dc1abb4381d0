#!/bin/bash
# make liveness: the main thread waits on nothing, and SIGTERM stops the
# daemon within 1 s in every state (issue 24's systematic proof).
#
# 1. Record: for each configuration (kernel output, --stdout into a pipe,
#    the EGD server beside the kernel output; the kernel output's file
#    source reads a FIFO, the others' a regular file) one daemon runs under
#    interpose.so (see interpose.c) through start-up, READY=1, a second
#    of steady state (an EGD client asks for bytes), SIGHUP, a second more
#    and SIGTERM; the library lists every call site of a call that can
#    wait that its MAIN thread reached, with the phase and a class.
# 2. Cases, each one fresh daemon:
#      block   every "wait" site: that call never returns (a poll keeps
#              waiting on the signalfds in its set only; see interpose.c);
#              every "nonblock" site (a FIFO, socket, eventfd or stdout
#              made non-blocking, getrandom with GRND_NONBLOCK): EAGAIN on
#              every call, the peer that never gets ready;
#      eintr, eagain (the first 3 calls), error (EIO, every call): every
#              site;
#      sighup, sigusr1, sigterm: at every start-up site, the signal is
#              sent just before the call;
#      stall, stall-hup: the file source stalls in steady state (a reader's
#              read that no signal ends, as a stuck device's), then SIGTERM,
#              or SIGHUP (its readers replaced) and SIGTERM.
#    A site is tested in the phase it first appeared in, and once more
#    in the reload if the reload runs it again (configuration, sources).
#    Once the site is hit, SIGTERM (the sigterm case: the signal it sent
#    itself); the daemon must be gone within 1 s (TEST_TIME_SCALE
#    stretches it, for valgrind or emulation only), and then:
#      - exit 0 with its summary logged, or an error exit (1, 2) with its
#        one-line error, never death by a signal;
#      - no PID file and nothing in its private RUNTIME_DIRECTORY (the
#        hw_random hand-over record) left, rng_quality as it was;
#      - credit: every RNDADDENTROPY's bits, summed, within what the
#        bytes of the file source read before it can carry at its credit
#        (512/1024); nothing at all with --stdout.
#    A case whose site was not reached in that run is listed, not failed.
# Ends with "liveness: N sites blocked, N stopped within 1 s" and
# "liveness: N passed, N failed, N not reached"; exit 1 on any failure.
#
# Environment: RNGFEED (./rngfeed), LIVENESS_SO (build/liveness/interpose.so),
# LIVENESS_CONFIGS ("kernel stdout egd"), LIVENESS_ACTIONS (all),
# LIVENESS_JOBS (3 cases at a time), LIVENESS_KEEP=1 keeps the work dir,
# LIVENESS_BLOCK_LOCAL=1 blocks regular-file calls too (not by default:
# a disk is not outside the process in the sense of the rule).
set -u

RNGFEED=${RNGFEED:-./rngfeed}
SO=${LIVENESS_SO:-build/liveness/interpose.so}
CLIENT=${LIVENESS_CLIENT:-tests/helper_egd_client}
CONFIGS=${LIVENESS_CONFIGS:-kernel stdout egd}
ACTIONS=${LIVENESS_ACTIONS:-block eintr eagain error sighup sigusr1 sigterm stall}
JOBS=${LIVENESS_JOBS:-3}
SCALE=${TEST_TIME_SCALE:-1}
LIMIT=$(awk -v s="$SCALE" 'BEGIN { print 1.0 * s }')
CREDIT=512
say() { printf '%s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (feeding the kernel needs CAP_SYS_ADMIN)"
for f in "$RNGFEED" "$SO" "$CLIENT"; do
	[ -e "$f" ] || { say "FAIL: $f is not built"; exit 1; }
done
command -v perl >/dev/null || skip "needs perl (the notify socket)"
RNGFEED=$(realpath "$RNGFEED") SO=$(realpath "$SO") CLIENT=$(realpath "$CLIENT")

tmp=$(mktemp -d /tmp/liveness.XXXXXX) || exit 1
quality=/sys/class/misc/hw_random/rng_quality
quality0=$(cat "$quality" 2>/dev/null)
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	if [ -n "$quality0" ] && [ "$(cat "$quality" 2>/dev/null)" != "$quality0" ]; then
		say "FAIL: $quality left changed; put back to $quality0"
		echo "$quality0" >"$quality"
	fi
	if [ -n "${LIVENESS_KEEP:-}" ]; then say "work dir kept: $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

head -c 4194304 /dev/urandom >"$tmp/data"
printf '# make liveness: no settings\n' >"$tmp/rngfeed.conf"

# source_path CONFIG DIR: what the file source reads.  The kernel output
# reads a FIFO (rngfeed(8)'s example), fed by a writer of its own that
# holds it open; the others a regular file, read once.
source_path() {
	if [ "$1" = kernel ]; then echo "$2/fifo"; else echo "$tmp/data"; fi
}

# config_args CONFIG DIR: the daemon's arguments.
config_args() {
	local opts=(-f -v -c "$tmp/rngfeed.conf" -p "$2/pid" -n file
		-O "file:device=$(source_path "$1" "$2")" -O "file:credit=$CREDIT"
		--ready-timeout 1 --metrics "$2/metrics")
	case $1 in
	kernel) opts+=(--interval 1) ;;
	stdout) opts+=(--stdout) ;;
	egd) opts+=(--interval 1 --egd-server "unix:$2/egd.sock") ;;
	esac
	printf '%s\n' "${opts[@]}"
}

# notify_listener DIR: systemd's side of sd_notify, DIR/notify -> DIR/notify.log.
notify_listener() {
	perl -MSocket -e '
		my ($path, $out) = @ARGV;
		socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
		bind($s, pack_sockaddr_un($path)) or die "bind: $!";
		open(my $o, ">", $out) or die; select($o); $| = 1;
		print "listening\n";
		while (defined recv($s, my $buf, 65536, 0)) { print "$buf\n"; }
	' "$1/notify" "$1/notify.log" >/dev/null 2>&1 &
	echo $!
}

# wait_for SECONDS COMMAND...: poll every 20 ms.
wait_for() {
	local n=$(($1 * 50 * SCALE))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.02
		n=$((n - 1))
	done
	return 1
}
alive() { kill -0 "$1" 2>/dev/null; }
ready() { grep -qs '^READY=1' "$1/notify.log"; }
hit() { [ -s "$1/hit" ]; }
gone_or() { ! alive "$1" || "${@:2}"; }

# run_daemon CONFIG DIR [ENV...]: start it in the background; prints its PID.
start_daemon() {
	local c=$1 d=$2 args lp
	shift 2
	mkdir -p "$d/run"
	lp=$(notify_listener "$d")
	echo "$lp" >"$d/listener"
	wait_for 5 grep -qs listening "$d/notify.log" || { say "FAIL: no notify socket"; return 1; }
	mapfile -t args < <(config_args "$c" "$d")
	if [ "$c" = kernel ]; then
		# A holder keeps the FIFO open at both ends (O_RDWR does not
		# wait), so a reload's reopen finds a writer and the writer
		# outlives the daemon's reader: only the harness blocks the open.
		mkfifo "$d/fifo" || return 1
		sleep 100000 <>"$d/fifo" &
		echo $! >"$d/holder"
		cat "$tmp/data" >"$d/fifo" 2>/dev/null &
		echo $! >"$d/writer"
	fi
	if [ "$c" = stdout ]; then
		env "$@" NOTIFY_SOCKET="$d/notify" RUNTIME_DIRECTORY="$d/run" STATE_DIRECTORY="$d/state" \
			LIVENESS_DIR="$d" LIVENESS_SOURCE="$tmp/data" LD_PRELOAD="$SO" \
			"$RNGFEED" "${args[@]}" 2>"$d/log" </dev/null > >(cat >/dev/null) &
	else
		env "$@" NOTIFY_SOCKET="$d/notify" RUNTIME_DIRECTORY="$d/run" STATE_DIRECTORY="$d/state" \
			LIVENESS_DIR="$d" LIVENESS_SOURCE="$(source_path "$c" "$d")" \
			LD_PRELOAD="$SO" \
			"$RNGFEED" "${args[@]}" 2>"$d/log" </dev/null >/dev/null &
	fi
	echo $! >"$d/daemon"
}

# stop_helpers DIR: the notify listener, the FIFO's writer and holder.
stop_helpers() {
	local f
	for f in listener writer holder; do
		[ -s "$1/$f" ] && kill "$(cat "$1/$f")" 2>/dev/null
	done
	return 0
}

# The moments the driver makes: steady state (an EGD client asks), the
# reload (SIGHUP), the stop (SIGTERM comes from the caller).
go_steady() { # CONFIG DIR PID
	touch "$2/phase.steady"
	[ "$1" = egd ] && timeout 5 "$CLIENT" "unix:$2/egd.sock" read 64 >/dev/null 2>&1 &
	return 0
}
go_reload() { # DIR PID
	touch "$1/phase.reload"
	kill -HUP "$2" 2>/dev/null
}

# ---- 1. record ---------------------------------------------------------------
record() { # CONFIG
	local c=$1 d=$tmp/record.$1 pid
	mkdir -p "$d"
	start_daemon "$c" "$d" || return 1
	pid=$(cat "$d/daemon")
	wait_for 10 gone_or "$pid" ready "$d"
	go_steady "$c" "$d" "$pid"
	sleep 1.5
	go_reload "$d" "$pid"
	sleep 1.5
	touch "$d/phase.stop"
	kill -TERM "$pid" 2>/dev/null
	wait_for 10 gone_or "$pid" false
	wait "$pid" 2>/dev/null
	stop_helpers "$d"
	[ -s "$d/sites" ] || { say "FAIL: $c: no call site recorded"; sed 's/^/    | /' "$d/log"; return 1; }
	ready "$d" || { say "FAIL: $c: the recording run never sent READY=1"; tail -n 5 "$d/log"; return 1; }
}

failures=0
for c in $CONFIGS; do
	record "$c" || failures=$((failures + 1))
done
[ "$failures" -eq 0 ] || exit 1

# sites lines: PHASE FUNC SITE CLASS VIA WHAT (interpose.c).  The cases,
# one per line: CONFIG PHASE FUNC SITE ACTION CLASS VIA WHAT.  A site is
# tested in its first phase; a start-up site once more in the reload when
# the reload reaches it and steady state did not.  Faults only where
# rngfeed makes the call itself (VIA direct): what a library does with an
# error of its own calls (libgcrypt aborts when it cannot read
# /proc/sys/crypto/fips_enabled) is the library's.
for c in $CONFIGS; do
	awk -v c="$c" -v actions="$ACTIONS" '
		BEGIN { na = split(actions, act, " ") }
		{
			key = $2 " " $3
			if (!(key in first)) { first[key] = $1; order[++n] = key }
			seen[$1, key] = 1
			# A site is said again when its class grows: the last line wins.
			what[key] = $6
			via[key] = $5
			pc[key, $1] = $4
		}
		END {
			for (i = 1; i <= n; i++) {
				key = order[i]; p = first[key]
				emit(key, p)
				if (p == "start" && seen["reload", key] && !seen["steady", key])
					emit(key, "reload")
			}
		}
		function emit(key, p,   j, k) {
			k = pc[key, p]
			for (j = 1; j <= na; j++) {
				if (act[j] == "stall") continue
				if (act[j] == "block" && k != "wait" && k != "nonblock") continue
				if (act[j] ~ /^sig/ && p != "start") continue
				if (act[j] ~ /^(eintr|eagain|error)$/ && via[key] != "direct") continue
				print c, p, key, act[j], k, via[key], what[key]
			}
		}' "$tmp/record.$c/sites"
	# The source stalled in steady state: a reader's read that never
	# returns, then SIGTERM (stall), or SIGHUP and then SIGTERM (stall-hup).
	case " $ACTIONS " in
	*" stall "*) printf '%s steady source - %s nonblock direct -\n' "$c" stall "$c" stall-hup ;;
	esac
done >"$tmp/cases"

distinct=$(for c in $CONFIGS; do awk '{ print $2, $3 }' "$tmp/record.$c/sites"; done | sort -u | wc -l)
ncases=$(wc -l <"$tmp/cases")
say "recorded $distinct distinct call sites (function, offset) of the main thread over $(echo "$CONFIGS" | wc -w) configurations; $ncases cases"

# ---- 2. the cases --------------------------------------------------------------
# run_case N CONFIG PHASE FUNC SITE ACTION WHAT: one line to $tmp/result.N:
# "pass|fail|unreached STOP_SECONDS CONFIG PHASE FUNC SITE ACTION REASON".
# A stop measured past the 3-s killer's own deadline (+1 s) means the
# machine itself stalled (the killer did not run on time either): that
# case runs once more, and says so.  The 1-s limit is the same.
run_case() {
	local stop
	run_case_once "$@"
	stop=$(awk '{ print $2 }' "$tmp/result.$1")
	if awk -v s="$stop" -v k="$((3 * SCALE + 1))" 'BEGIN { exit !(s != "-" && s > k) }'; then
		rm -f "$tmp/faillog.$1"
		run_case_once "$@"
		sed -i "s/\$/ (run again: the machine stalled, the first stop took $stop s)/" "$tmp/result.$1"
		echo "$*" >>"$tmp/reruns"
	fi
}

run_case_once() {
	local n=$1 c=$2 p=$3 fn=$4 off=$5 a=$6 target=$7 d=$tmp/case.$1 pid t0 t1 rc why=""
	local result=pass stop=-
	rm -rf "$d" && mkdir -p "$d"
	local stall=
	[ "${a#stall}" = "$a" ] || stall=LIVENESS_STALL_SOURCE=1
	start_daemon "$c" "$d" LIVENESS_SITE="$fn:$off" LIVENESS_ACTION="$a" \
		LIVENESS_PHASE="$p" $stall || { echo "fail - $c $p $fn $off $a no-start" >"$tmp/result.$n"; return; }
	pid=$(cat "$d/daemon")
	if [ "$p" != start ]; then
		wait_for 10 gone_or "$pid" ready "$d"
		go_steady "$c" "$d" "$pid"
		[ "$p" = reload ] || [ "$p" = stop ] && { sleep 0.3; go_reload "$d" "$pid"; }
		[ "$p" = stop ] && sleep 0.3 && touch "$d/phase.stop"
	fi
	if [ "$p" = stop ]; then
		:
	else
		wait_for 5 gone_or "$pid" hit "$d"
	fi
	# Faults and signals: let the daemon carry on to its loop first.
	case $a in
	eintr | eagain | error | sighup | sigusr1)
		hit "$d" && wait_for 5 gone_or "$pid" ready "$d"
		[ "$p" = start ] || sleep 0.2
		;;
	stall-hup)
		kill -HUP "$pid" 2>/dev/null
		sleep 0.5
		;;
	esac
	# The sigterm case is timed from the signal its site sent.
	local exited_before=0
	t0=$EPOCHREALTIME
	if [ "$a" = sigterm ]; then
		hit "$d" && t0=$(awk '{ print $4; exit }' "$d/hit")
	else
		alive "$pid" || exited_before=1
		kill -TERM "$pid" 2>/dev/null
	fi
	# A hang is killed after 3 s, so the run ends either way.
	( sleep "$((3 * SCALE))"; kill -KILL "$pid" 2>/dev/null ) &
	local killer=$!
	wait "$pid" 2>/dev/null
	rc=$?
	t1=$EPOCHREALTIME
	kill "$killer" 2>/dev/null
	wait "$killer" 2>/dev/null
	stop_helpers "$d"
	# A fault on the log's own writes or on the PID file's unlink: the
	# summary or the removal cannot happen, by construction.
	local log_broken=0 pid_broken=0
	case $a:$target in
	eintr:*/log | eagain:*/log | error:*/log) log_broken=1 ;;
	eintr:*/pid | eagain:*/pid | error:*/pid) pid_broken=1 ;;
	esac
	stop=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	if ! hit "$d"; then
		result=unreached
	elif [ "$exited_before" = 0 ] && awk -v s="$stop" -v l="$LIMIT" 'BEGIN { exit !(s > l) }'; then
		result=fail why="not gone within ${LIMIT} s of SIGTERM (rc $rc)"
	elif [ "$rc" -gt 2 ]; then
		result=fail why="exit status $rc (a signal or a crash)"
	elif [ "$log_broken" = 0 ] && [ "$rc" -eq 0 ] && ! grep -q 'summary after' "$d/log"; then
		result=fail why="exit 0 without its summary"
	elif [ "$log_broken" = 0 ] && [ "$rc" -ne 0 ] && ! grep -q '^rngfeed: ' "$d/log"; then
		result=fail why="exit $rc without a message"
	fi
	# Its own PID file (this PID in it): another's, or one it could not
	# lock, it must leave alone; one whose unlink failed here stays.
	if [ "$pid_broken" = 0 ] && [ "$(cat "$d/pid" 2>/dev/null)" = "$pid" ]; then
		result=fail why="$why; PID file left"
	fi
	if [ -n "$(find "$d/run" -mindepth 1 2>/dev/null)" ]; then
		result=fail why="$why; left in RUNTIME_DIRECTORY: $(find "$d/run" -mindepth 1 -printf '%f ')"
	fi
	if [ -s "$d/credit" ]; then
		if [ "$c" = stdout ]; then
			result=fail why="$why; --stdout credited the kernel"
		elif ! awk -v k="$CREDIT" '{ s += $1; if (s > $2 * 8 * k / 1024) exit 1 }' "$d/credit"; then
			result=fail why="$why; credit beyond the tested input read"
		fi
	fi
	[ "$result" = unreached ] && why="site not reached in this run"
	echo "$result $stop $c $p $fn $off $a ${why#; }" >"$tmp/result.$n"
	[ "$result" = fail ] && cp "$d/log" "$tmp/faillog.$n"
	[ -n "${LIVENESS_KEEP:-}" ] || rm -rf "$d"
}

start=$EPOCHREALTIME
n=0
while read -r c p fn off a _ _ what; do
	n=$((n + 1))
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	# Its stderr: the shell's "Killed" and "Hangup" notes about the daemon.
	run_case "$n" "$c" "$p" "$fn" "$off" "$a" "$what" 2>>"$tmp/driver.err" &
done <"$tmp/cases"
wait
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# ---- 3. the report ---------------------------------------------------------------
cat "$tmp"/result.* 2>/dev/null | sort -k3,3 -k4,4 -k5,5 -k6,6 -k7,7 >"$tmp/results"
# addr SITE: "file.c:LINE (function) from file.c:LINE (function)": at each
# return address, the innermost inlined frame in a .c file (not a libc
# header's fortify wrapper).
frame() {
	addr2line -f -s -i -e "$RNGFEED" "$(printf '0x%x' $(($1 - 1)))" |
		paste - - | awk '$2 ~ /\.c:/ { print $2 " (" $1 ")"; exit }'
}
where() {
	if [ "$1" = - ]; then echo "(a reader thread's read)"; else addr "$1"; fi
}
addr() {
	local at=${1%/*} from=${1#*/} out
	out=$(frame "$at")
	[ "$from" = 0x0 ] || out="$out from $(frame "$from")"
	echo "$out"
}
while read -r res stop c p fn off a why; do
	[ "$res" = pass ] && continue
	printf '%s: %-6s %-6s %-7s %s at %s %s: %s (stop %s s)\n' \
		"${res^^}" "$c" "$p" "$a" "$fn" "$off" "$(where "$off")" "$why" "$stop"
done <"$tmp/results"
for f in "$tmp"/faillog.*; do
	[ -e "$f" ] || continue
	say "--- the log of case ${f##*.}, last lines:"
	tail -n 4 "$f" | sed 's/^/    | /'
done 2>/dev/null | head -n 60
slowest=$(awk '$1 != "unreached" && $2 != "-" { if ($2 > m) m = $2 } END { printf "%.3f", m }' "$tmp/results")
# Blocked: the block cases and the source stalls (a reader's read blocked).
blocked=$(awk '$7 ~ /^(block|stall)/ && $1 != "unreached"' "$tmp/results" | wc -l)
blocked_ok=$(awk '$7 ~ /^(block|stall)/ && $1 == "pass"' "$tmp/results" | wc -l)
blocked_sites=$(awk '$7 ~ /^(block|stall)/ && $1 != "unreached" { print $5, $6 }' "$tmp/results" | sort -u | wc -l)
passed=$(grep -c '^pass ' "$tmp/results")
failed=$(grep -c '^fail ' "$tmp/results")
unreached=$(grep -c '^unreached ' "$tmp/results")
reruns=0
[ -e "$tmp/reruns" ] && reruns=$(wc -l <"$tmp/reruns")
say "$ncases cases in $elapsed s ($JOBS at a time); slowest stop ${slowest} s; $blocked_sites distinct sites blocked, $distinct sites in all; $reruns run again after a stall of the machine"
say "liveness: $blocked sites blocked, $blocked_ok stopped within 1 s"
say "liveness: $passed passed, $failed failed, $unreached not reached"
[ "$failed" -eq 0 ] && [ "$blocked" -gt 0 ]
