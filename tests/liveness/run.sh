#!/bin/bash
# make liveness: the main thread waits on nothing, and SIGTERM stops the
# daemon within 1 s in every state, whatever stops answering outside it.
#
# Each daemon runs under two helpers: interpose.so (LD_PRELOAD: lists and
# acts on the call sites of calls that can wait; see interpose.c) and
# supervisor (a service manager's stand-in: the notify socket, stdout and
# stderr as pipes that can stall, a subreaper that records every exit and
# its time; see supervisor.c).
#
# Configurations (LIVENESS_CONFIGS):
#   kernel    the kernel output; the file source reads a FIFO
#   stdout    --stdout into a pipe read at 4 MiB/s
#   egd       the EGD server on a unix socket beside the kernel output
#   egd-tcp   --egd-server tcp:PORT, in a network namespace of its own
#   test      -t, its rate lines to stderr, a pipe (a journal stream)
#   stderr    the kernel output, its log to stderr, a pipe
#   detached  no -f: it detaches, -D nobody, -p FILE (the PID file's
#             keeper), its log to syslog (interpose.c keeps a copy)
#   hwrng     the hwrng source on the machine's /dev/hwrng, its hw_random
#             directory a fixture (-O hwrng:sysfs=DIR): the hand-over is
#             the fixture's, the machine's rng_quality is never touched
# The regular files the others read are a temporary copy.
#
# 1. Record: per configuration, one daemon through start-up, READY=1, a
#    second of steady state (an EGD client asks for bytes), SIGHUP, a
#    second more and SIGTERM; the library lists every call site its MAIN
#    thread reached, with the phase and a class (interpose.c).  A call
#    site is the call and its caller (two return addresses): the distinct
#    sites are counted over all configurations.
# 2. Cases, each one fresh daemon (LIVENESS_ACTIONS picks the kinds):
#    block   every distinct site that can wait on something outside the
#            process (class wait, sysfs or nonblock, interpose.c) meets a
#            peer that never gets ready: the call waits for ever as the
#            kernel would make it wait (a handled signal ends it with
#            EINTR), a poll only ever sees its signalfds, a non-blocking
#            fd becomes a stalled peer (EAGAIN everywhere, never ready).
#            In the configuration and phase it is first blockable in, and
#            once more in the reload if the reload reaches it again.
#    stall   a peer stops for real, from a phase on (LIVENESS_STALLS):
#              source     a reader's read of the source never returns (a
#                         stuck device); then SIGTERM, or SIGHUP and SIGTERM
#              stdout, stderr  the pipe's reader stops and the pipe is
#                         full (stderr also before the first line)
#              egd-idle, egd-half, egd-noread  an EGD client that connects
#                         and says nothing, half a request, or asks and
#                         never reads (unix and TCP)
#              keeper     the PID file's keeper is stopped (SIGSTOP) before
#                         SIGTERM
#              syslog     every syslog call waits, from steady state
#              conffile   -c names a FIFO: no writer; a writer that never
#                         writes; swapped in before a SIGHUP
#            The library lists the calls that met the stall (any thread).
#    eintr, eagain, error  each distinct site rngfeed calls itself, once,
#            where that error can happen: EINTR (first 3 calls) where the
#            call can sleep (wait, sysfs, bounded), EAGAIN (first 3) where
#            it is non-blocking or a lock, EIO (every call) everywhere.
#            LIVENESS_FAULTS=all: all three at every such site in every
#            configuration (the matrix before; about 4 times as many cases).
#    signals SIGHUP, SIGUSR1, SIGTERM before the first call at every
#            start-up site, one run per configuration and signal (a
#            SIGTERM is timed from the first).
#    Once the site is hit or the stall met, SIGTERM; the daemon (and a
#    detaching parent still waiting for it) must be gone within 1 s
#    (TEST_TIME_SCALE stretches it, for valgrind or emulation only), its
#    other processes (the keeper) within 5 s more, and then:
#      - exit 0 with its summary logged, or an error exit (1, 2) with its
#        one-line error, never death by a signal (a stalled or blocked log
#        cannot carry the summary: not asked for then);
#      - no PID file holding its PID, nothing left in its private
#        RUNTIME_DIRECTORY (the hand-over's record) and the fixture's
#        rng_quality put back (hwrng: a blocked sysfs write may leave the
#        hand-back to the record, and then the record must be there);
#      - credit: every RNDADDENTROPY's bits, summed, within what the bytes
#        of the source read before it can carry at its credit (512/1024,
#        the hwrng source 1024); nothing at all with --stdout or -t.
#    A case whose site was not reached (or stall not met) in that run is
#    listed, not failed.
# The machine's rng_quality is never written: a change during the run is
# another instance's, reported and not failed (no daemon here uses the
# machine's hand-over).
# Ends with "liveness: N distinct sites blocked, M stopped within 1 s"
# (N: call sites, function and two return addresses, that were blocked or
# met a stall in a case that reached them; M: those whose every case
# passed) and "liveness: N passed, N failed, N not reached"; exit 1 on any
# failure.
#
# Environment: RNGFEED (./rngfeed), LIVENESS_SO (build/liveness/interpose.so),
# LIVENESS_SUPERVISOR (build/liveness/supervisor), LIVENESS_CONFIGS (all
# above), LIVENESS_ACTIONS ("block stall eintr eagain error signals"),
# LIVENESS_STALLS (all above), LIVENESS_FAULTS=all, LIVENESS_ONLY=REGEX
# (only the case lines it matches: "CONFIG PHASE FUNC SITE ACTION ..."),
# LIVENESS_JOBS (3 cases at a time), LIVENESS_KEEP=1 keeps the work dir,
# LIVENESS_BLOCK_LOCAL=1 blocks regular-file calls too (not by default: a
# disk is not outside the process in the sense of the rule).
set -u

RNGFEED=${RNGFEED:-./rngfeed}
SO=${LIVENESS_SO:-build/liveness/interpose.so}
SUP=${LIVENESS_SUPERVISOR:-build/liveness/supervisor}
CLIENT=${LIVENESS_CLIENT:-tests/helper_egd_client}
CONFIGS=${LIVENESS_CONFIGS:-kernel stdout egd egd-tcp test stderr detached hwrng}
ACTIONS=${LIVENESS_ACTIONS:-block stall eintr eagain error signals}
STALLS=${LIVENESS_STALLS:-source stdout stderr egd-idle egd-half egd-noread keeper syslog conffile}
FAULTS=${LIVENESS_FAULTS:-}
ONLY=${LIVENESS_ONLY:-}
JOBS=${LIVENESS_JOBS:-3}
SCALE=${TEST_TIME_SCALE:-1}
LIMIT=$(awk -v s="$SCALE" 'BEGIN { print 1.0 * s }')
LIMIT_US=$((SCALE * 1000000))
CREDIT=512
EGD_PORT=7777
STDOUT_RATE=4194304
HWRNG_QUALITY=1000
say() { printf '%s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root (feeding the kernel needs CAP_SYS_ADMIN)"
for f in "$RNGFEED" "$SO" "$SUP" "$CLIENT"; do
	[ -e "$f" ] || { say "FAIL: $f is not built"; exit 1; }
done
RNGFEED=$(realpath "$RNGFEED") SO=$(realpath "$SO") SUP=$(realpath "$SUP") CLIENT=$(realpath "$CLIENT")

# Configurations this machine cannot run are said and left out.
configs=
for c in $CONFIGS; do
	why=
	case $c in
	egd-tcp) { command -v unshare && command -v ip && command -v nsenter; } >/dev/null ||
		why="needs unshare, ip and nsenter (a network namespace)"
		[ -z "$why" ] && ! unshare -n true 2>/dev/null && why="cannot make a network namespace" ;;
	detached) id nobody >/dev/null 2>&1 || why="no user nobody" ;;
	hwrng) head -c 16 /dev/hwrng >/dev/null 2>&1 || why="/dev/hwrng cannot be read (no hw_random device)" ;;
	esac
	if [ -n "$why" ]; then say "note: configuration $c left out: $why"; else configs="$configs $c"; fi
done
CONFIGS=${configs# }
[ -n "$CONFIGS" ] || skip "no configuration can run here"

tmp=$(mktemp -d /tmp/liveness.XXXXXX) || exit 1
# The detached daemon reads and writes here as nobody.
chmod 755 "$tmp"
quality=/sys/class/misc/hw_random/rng_quality
quality0=$(cat "$quality" 2>/dev/null)
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local d
	# (Not defined yet when the run ends before its cases.)
	for d in "$tmp"/case.* "$tmp"/record.*; do
		[ -d "$d" ] && declare -F stop_helpers >/dev/null && stop_helpers "$d"
	done
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	# Never written back: no daemon of this run takes the machine's
	# hand-over, so a change is another instance's (a service's).
	if [ -n "$quality0" ] && [ "$(cat "$quality" 2>/dev/null)" != "$quality0" ]; then
		say "note: $quality changed from '$quality0' to '$(cat "$quality" 2>/dev/null)' during the run: another instance's (no daemon here uses the machine's hw_random directory); not written back"
	fi
	if [ -n "${LIVENESS_KEEP:-}" ]; then say "work dir kept: $tmp"; else rm -rf "$tmp"; fi
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap 'exit 1' INT TERM HUP

head -c 4194304 /dev/urandom >"$tmp/data"
chmod 644 "$tmp/data"
printf '# make liveness: no settings\n' >"$tmp/rngfeed.conf"
chmod 644 "$tmp/rngfeed.conf"

# ---- the configurations ------------------------------------------------------
# The helpers below set variables rather than print (no command
# substitution, no process): a case costs a few processes of its own, and
# the machine this runs on is loaded.  (shellcheck's SC2034 below: the
# *_out names are namerefs to the callers' variables.)

# The process generation of each configuration's daemon (interpose.c):
# a detaching daemon is its parent's child.
declare -A GEN=([detached]=1)

# source_path VAR CONFIG DIR: what the source reads.  The kernel output's
# file source reads a FIFO (rngfeed(8)'s example), fed by a writer of its
# own that holds it open; the hwrng source the machine's device; the
# others a regular file, read once.
# shellcheck disable=SC2034
source_path() {
	local -n source_path_out=$1
	case $2 in
	kernel) source_path_out=$3/fifo ;;
	hwrng) source_path_out=/dev/hwrng ;;
	*) source_path_out=$tmp/data ;;
	esac
}

# egd_addr VAR CONFIG DIR
# shellcheck disable=SC2034
egd_addr() {
	local -n egd_addr_out=$1
	if [ "$2" = egd-tcp ]; then egd_addr_out=tcp:127.0.0.1:$EGD_PORT; else egd_addr_out=unix:$3/egd.sock; fi
}

# config_args ARRAY CONFIG DIR CONF: the daemon's arguments.
config_args() {
	local -n config_args_out=$1
	local c=$2 d=$3 src addr
	config_args_out=(-v -c "$4" -p "$d/pid" --ready-timeout 1 --metrics "$d/metrics")
	[ "$c" = detached ] || config_args_out+=(-f)
	if [ "$c" = hwrng ]; then
		config_args_out+=(-n hwrng -O "hwrng:sysfs=$d/sysfs")
	else
		source_path src "$c" "$d"
		config_args_out+=(-n file -O "file:device=$src" -O "file:credit=$CREDIT")
	fi
	case $c in
	stdout) config_args_out+=(--stdout) ;;
	test) config_args_out+=(-t --stats-interval 1) ;;
	egd | egd-tcp)
		egd_addr addr "$c" "$d"
		config_args_out+=(--interval 1 --egd-server "$addr") ;;
	detached) config_args_out+=(--interval 1 -D nobody) ;;
	*) config_args_out+=(--interval 1) ;;
	esac
}

# prepare CONFIG DIR: what the configuration needs before the daemon.  The
# directory (made by the caller with mkdir_open) and its log are open to
# all: the detached daemon (nobody) writes interpose.c's files and its
# syslog copy there.
prepare() {
	local c=$1 d=$2
	umask 000
	mkdir -p "$d" "$d/run" "$d/sysfs"
	: >>"$d/log"
	umask 022
	if [ "$c" = kernel ]; then
		# A holder keeps the FIFO open at both ends (O_RDWR does not
		# wait), so a reload's reopen finds a writer and the writer
		# outlives the daemon's reader: only the harness blocks the open.
		mkfifo "$d/fifo" || return 1
		sleep 100000 <>"$d/fifo" &
		echo $! >>"$d/helpers"
		cat "$tmp/data" >"$d/fifo" 2>/dev/null &
		echo $! >>"$d/helpers"
	fi
	if [ "$c" = hwrng ]; then
		# The kernel, played: one device, current, at its quality.
		echo virtio_rng.0 >"$d/sysfs/rng_current"
		echo "virtio_rng.0 none " >"$d/sysfs/rng_available"
		echo "$HWRNG_QUALITY" >"$d/sysfs/rng_quality"
		echo 0 >"$d/sysfs/rng_selected"
	fi
	return 0
}

# start_daemon CONFIG DIR CONF [SUPERVISOR-OPTION...] -- [ENV...]: in the
# background, under the supervisor; its PID in DIR/supervisor.
start_daemon() {
	local c=$1 d=$2 conf=$3 args=() sup=() env=() launch=() src err=$2/log
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sup+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	env=("$@")
	prepare "$c" "$d" || return 1
	config_args args "$c" "$d" "$conf"
	source_path src "$c" "$d"
	case $c in
	stdout) sup+=(-o "$STDOUT_RATE") ;;
	test | stderr) sup+=(-e) err=/dev/null ;;
	esac
	# Its own network: the port is free, and nothing outside can reach it.
	[ "$c" = egd-tcp ] && launch=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
	"$SUP" -d "$d" "${sup[@]}" -- "${launch[@]}" env \
		NOTIFY_SOCKET="$d/notify" RUNTIME_DIRECTORY="$d/run" STATE_DIRECTORY="$d/state" \
		LIVENESS_DIR="$d" LIVENESS_SOURCE="$src" LIVENESS_SYSFS="$d/sysfs" \
		"${env[@]}" LD_PRELOAD="$SO" \
		"$RNGFEED" "${args[@]}" 2>"$err" </dev/null >/dev/null &
	echo $! >"$d/supervisor"
}

# The processes, from the files the supervisor and interpose.c write,
# read with built-ins (the waits below look every 20 ms): the one
# started, the daemon (its generation), the keeper, each one's exit.
# shellcheck disable=SC2034
pid_of() { # VAR FILE: the PID FILE holds, or false
	local -n pid_of_out=$1
	pid_of_out=
	[ -s "$2" ] && read -r pid_of_out <"$2"
}
exited() { [ -n "$2" ] && [ -s "$1/exit.$2" ]; }
ready() { [ -e "$1/ready" ]; }
hit() { [ -s "$1/hit" ] || [ -s "$1/met" ]; }
# The daemon, or the process started before the daemon exists.
target_pid() { # VAR CONFIG DIR
	pid_of "$1" "$3/gen.${GEN[$2]:-0}" || pid_of "$1" "$3/started"
}
gone() { # CONFIG DIR
	local p
	target_pid p "$1" "$2"
	exited "$2" "$p"
}
gone_or() { gone "$1" "$2" || "${@:3}"; }

# mkdir_open DIR: a case's directory, which anyone may write.
mkdir_open() {
	umask 000
	mkdir -p "$1"
	umask 022
}

# A sleep without a process: a read from a pipe that nothing writes.
exec {NAPFD}<> <(:)
nap() { read -r -t "$1" -u "$NAPFD" _; return 0; }

# usec TIME VAR: an EPOCHREALTIME-like "S.UUUUUU" in microseconds.
# shellcheck disable=SC2034
usec() {
	local -n usec_out=$2
	local s=${1%.*} f=${1#*.}000000
	usec_out=$((s * 1000000 + 10#${f:0:6}))
}

# wait_for SECONDS COMMAND...: until COMMAND holds, every 20 ms.  LATE:
# the most, in microseconds, that one of its naps overslept (the machine
# did not run this shell for that long).
LATE=0
wait_for() {
	local until=$((${EPOCHREALTIME/./} + $1 * SCALE * 1000000)) t late
	shift
	while :; do
		"$@" && return 0
		t=${EPOCHREALTIME/./}
		[ "$t" -lt "$until" ] || return 1
		nap 0.02
		late=$((${EPOCHREALTIME/./} - t - 20000))
		[ "$late" -gt "$LATE" ] && LATE=$late
	done
}

# stop_helpers DIR: the FIFO's writer and holder, EGD clients (and DIR's
# list of them is done with); any process of the daemon's that the
# supervisor has not reaped (a hang the case failed already).
stop_helpers() {
	local p rest
	if [ -s "$1/helpers" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$1/helpers"
		: >"$1/helpers"
	fi
	if [ -s "$1/procs" ]; then
		while read -r p rest; do
			[ -e "$1/exit.$p" ] && continue
			kill -CONT "$p" 2>/dev/null
			kill -KILL "$p" 2>/dev/null
		done <"$1/procs"
	fi
	return 0
}

# The moments the driver makes: steady state (an EGD client asks), the
# reload (SIGHUP), the stop (SIGTERM comes from the caller).
egd_client() { # CONFIG DIR SECONDS CLIENT-ARGS...: in the daemon's network
	local c=$1 d=$2 s=$3 ns=() addr p
	shift 3
	egd_addr addr "$c" "$d"
	pid_of p "$d/started"
	[ "$c" = egd-tcp ] && ns=(nsenter --net="/proc/$p/ns/net")
	timeout "$s" "${ns[@]}" "$CLIENT" "$addr" "$@"
}
go_steady() { # CONFIG DIR
	: >"$2/phase.steady"
	case $1 in
	egd | egd-tcp) egd_client "$1" "$2" 5 read 64 >/dev/null 2>&1 & ;;
	esac
	return 0
}
go_reload() { # CONFIG DIR
	local p
	: >"$2/phase.reload"
	target_pid p "$1" "$2"
	kill -HUP "$p" 2>/dev/null
}

# ---- 1. record ---------------------------------------------------------------
record() { # CONFIG
	local c=$1 d=$tmp/record.$1 pid
	mkdir_open "$d"
	start_daemon "$c" "$d" "$tmp/rngfeed.conf" -- || return 1
	wait_for 10 gone_or "$c" "$d" ready "$d"
	go_steady "$c" "$d"
	nap 1.5
	go_reload "$c" "$d"
	nap 1.5
	: >"$d/phase.stop"
	target_pid pid "$c" "$d"
	kill -TERM "$pid" 2>/dev/null
	wait_for 10 gone "$c" "$d"
	stop_helpers "$d"
	pid_of pid "$d/supervisor"
	wait "$pid" 2>/dev/null
	[ -s "$d/sites" ] || { say "FAIL: $c: no call site recorded"; sed 's/^/    | /' "$d/log"; return 1; }
	ready "$d" || { say "FAIL: $c: the recording run never sent READY=1"; tail -n 5 "$d/log"; return 1; }
}

start=$EPOCHREALTIME
failures=0
running=0
for c in $CONFIGS; do
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	record "$c" >"$tmp/record.$c.out" 2>&1 &
	running=$((running + 1))
done
wait
for c in $CONFIGS; do
	[ -s "$tmp/record.$c.out" ] && { cat "$tmp/record.$c.out"; failures=$((failures + 1)); }
done
[ "$failures" -eq 0 ] || exit 1

# ---- the cases -----------------------------------------------------------------
# sites lines: PHASE FUNC SITE CLASS VIA GEN WHAT (interpose.c), the
# daemon's own process only.  The cases, one per line:
#   CONFIG PHASE FUNC SITE ACTION CLASS VIA WHAT
# A distinct site (FUNC SITE) is blocked in the first configuration and
# phase where it can wait (configurations in the order above, then
# start, steady, reload, stop), and once more in that configuration's
# reload when the reload reaches it and steady state did not; faults the
# same way, where rngfeed makes the call itself (VIA direct): what a
# library does with an error of its own calls (libgcrypt aborts when it
# cannot read /proc/sys/crypto/fips_enabled) is the library's.  syslog()
# returns nothing: no fault there.
for c in $CONFIGS; do
	g=${GEN[$c]:-0}
	awk -v c="$c" -v g="$g" '$6 == g { $6 = ""; print c, $0 }' "$tmp/record.$c/sites"
done >"$tmp/sites.all"
awk -v actions="$ACTIONS" -v faults="$FAULTS" '
	BEGIN {
		na = split(actions, a, " ")
		for (i = 1; i <= na; i++) want[a[i]] = 1
	}
	{
		c = $1; p = $2; key = $3 " " $4; k = $5
		if (!(c in corder)) corder[c] = ++nc
		ckey = c SUBSEP key
		if (!(ckey in first)) { first[ckey] = p; seenc[ckey] = ++n; order[n] = ckey }
		seen[ckey, p] = 1
		# A site is said again when its class grows: the last line wins.
		cls[ckey, p] = k; via[key] = $6; what[ckey] = $7
	}
	function blockable(k) { return k == "wait" || k == "sysfs" || k == "nonblock" }
	function realistic(act, k, fn) {
		if (faults == "all") return 1
		if (act == "eintr") return k == "wait" || k == "sysfs" || k == "bounded"
		if (act == "eagain") return k == "nonblock" || fn == "fcntl"
		return 1
	}
	function emit(ckey, p, act,   parts, key) {
		split(ckey, parts, SUBSEP); key = parts[2]
		print parts[1], p, key, act, cls[ckey, p], via[key], what[ckey]
	}
	function emit_reload(ckey, act) {
		split(ckey, parts, SUBSEP)
		if (first[ckey] == "start" && seen[ckey, "reload"] && !seen[ckey, "steady"])
			emit(ckey, "reload", act)
	}
	END {
		split("start steady reload stop", ph, " ")
		for (i = 1; i <= n; i++) {
			ckey = order[i]; split(ckey, parts, SUBSEP); key = parts[2]
			fn = substr(key, 1, index(key, " ") - 1)
			# block: the first (configuration, phase) it can wait in.
			if (want["block"] && !(key in blocked)) {
				for (j = 1; j <= 4; j++)
					if (seen[ckey, ph[j]] && blockable(cls[ckey, ph[j]])) {
						blocked[key] = 1
						emit(ckey, ph[j], "block")
						if (ph[j] == "start" && seen[ckey, "reload"] && !seen[ckey, "steady"] && blockable(cls[ckey, "reload"]))
							emit(ckey, "reload", "block")
						break
					}
			}
			if (via[key] != "direct" || fn == "syslog") continue
			if (faults != "all" && (key in faulted)) continue
			faulted[key] = 1
			p = first[ckey]
			for (f = 1; f <= 3; f++) {
				act = f == 1 ? "eintr" : f == 2 ? "eagain" : "error"
				if (!want[act] || !realistic(act, cls[ckey, p], fn)) continue
				emit(ckey, p, act)
				emit_reload(ckey, act)
			}
		}
	}' "$tmp/sites.all" >"$tmp/cases"

# Signals at every start-up site, one run per configuration and signal.
if has "$ACTIONS" signals; then
	for c in $CONFIGS; do
		for s in sighup sigusr1 sigterm; do echo "$c start * * $s - - -"; done
	done >>"$tmp/cases"
fi

# Stalls: CONFIG PHASE - - stall:KIND[:hup] - - -
if has "$ACTIONS" stall; then
	for c in $CONFIGS; do
		for s in $STALLS; do
			case $c:$s in
			kernel:source | stdout:source | hwrng:source | detached:source)
				echo "$c steady - - stall:source - - -"
				[ "$c" = stdout ] || echo "$c steady - - stall:source:hup - - -" ;;
			stdout:stdout) echo "$c steady - - stall:stdout:hup - - -" ;;
			stderr:stderr)
				echo "$c start - - stall:stderr - - -"
				echo "$c steady - - stall:stderr:hup - - -" ;;
			test:stderr) echo "$c steady - - stall:stderr:hup - - -" ;;
			egd:egd-* | egd-tcp:egd-*) echo "$c steady - - stall:$s:hup - - -" ;;
			detached:keeper) echo "$c stop - - stall:keeper - - -" ;;
			detached:syslog) echo "$c steady - - stall:syslog:hup - - -" ;;
			kernel:conffile)
				echo "$c start - - stall:conffile - - -"
				echo "$c start - - stall:conffile-writer - - -"
				echo "$c reload - - stall:conffile-reload - - -" ;;
			esac
		done
	done >>"$tmp/cases"
fi
if [ -n "$ONLY" ]; then
	grep -E -- "$ONLY" "$tmp/cases" >"$tmp/cases.only"
	mv "$tmp/cases.only" "$tmp/cases"
fi

distinct=$(awk '{ print $3, $4 }' "$tmp/sites.all" | sort -u | wc -l)
ncases=$(wc -l <"$tmp/cases")
say "recorded $distinct distinct call sites (function and two return addresses) of the daemon's main thread over $(echo "$CONFIGS" | wc -w) configurations ($CONFIGS); $ncases cases"

# ---- 2. the cases --------------------------------------------------------------
# run_case N CONFIG PHASE FUNC SITE ACTION CLASS WHAT: one line to
# $tmp/result.N: "pass|fail|unreached STOP CONFIG PHASE FUNC SITE ACTION
# CLASS REASON"; the case's directory stays until the end (its hit and
# met files make the report).  A stop measured past the 3-s killer's own
# deadline (+1 s) means the machine itself stalled (the killer did not run
# on time either); so does one only late (under 3 s, an exit of its own)
# while the driver's 20-ms naps overslept by more than 0.25 s: such a case
# runs once more, and says so.  The 1-s limit is the same.
run_case() {
	local stop us again=
	run_case_once "$@"
	read -r _ stop _ <"$tmp/result.$1"
	[ "$stop" = - ] && return
	usec "$stop" us
	[ "$us" -gt $(((3 * SCALE + 1) * 1000000)) ] && again="the first stop took $stop s"
	[ -e "$tmp/case.$1/late" ] &&
		again="the first stop took $stop s and the driver was not run for over 0.25 s meanwhile"
	if [ -n "$again" ]; then
		run_case_once "$@"
		local line
		read -r line <"$tmp/result.$1"
		echo "$line (run again: the machine stalled; $again)" >"$tmp/result.$1"
		echo "$*" >>"$tmp/reruns"
	fi
}

# stall_begin CONFIG DIR KIND: the peer stops now.
stall_begin() {
	local c=$1 d=$2 k=$3 p
	case $k in
	stdout | stderr)
		pid_of p "$d/supervisor"
		if [ "$k" = stdout ]; then kill -USR1 "$p"; else kill -USR2 "$p"; fi ;;
	egd-idle | egd-half | egd-noread)
		local how=(idle 30)
		[ "$k" = egd-half ] && how=(idle 30 half)
		[ "$k" = egd-noread ] && how=(noread 30)
		egd_client "$c" "$d" 60 "${how[@]}" >/dev/null 2>&1 &
		echo $! >>"$d/helpers"
		nap 0.3 ;;
	keeper)
		pid_of p "$d/keeper" && kill -STOP "$p" ;;
	conffile-reload)
		rm -f "$d/rngfeed.conf"
		mkfifo "$d/rngfeed.conf" ;;
	esac
	: >"$d/stall"
}

run_case_once() {
	local n=$1 c=$2 p=$3 fn=$4 off=$5 a=$6 k=$7 what=$8 d=$tmp/case.$1
	local result=pass stop=- why="" stall="" hup="" conf=$tmp/rngfeed.conf
	local env=(LIVENESS_SITE="$fn:$off" LIVENESS_ACTION="$a" LIVENESS_PHASE="$p"
		LIVENESS_GEN="${GEN[$c]:-0}") sup=()
	[ -e "$d" ] && rm -rf "$d"
	mkdir_open "$d"
	case $a in
	stall:*)
		stall=${a#stall:}
		[ "${stall%:hup}" = "$stall" ] || { hup=1; stall=${stall%:hup}; }
		env=(LIVENESS_STALL="${stall%%-*}")
		;;
	sig*) env+=(LIVENESS_SITE='*:*' LIVENESS_GEN=any) ;;
	esac
	# Stalls from the start: the flag, and the peer, before the daemon.
	case $stall in
	stderr) [ "$p" = start ] && { sup=(-E); : >"$d/stall"; } ;;
	conffile | conffile-writer)
		conf=$d/rngfeed.conf
		mkfifo "$conf"
		[ "$stall" = conffile-writer ] && { sleep 100000 <>"$conf" & echo $! >>"$d/helpers"; }
		: >"$d/stall" ;;
	conffile-reload)
		conf=$d/rngfeed.conf
		printf '# make liveness: no settings\n' >"$conf" ;;
	esac
	start_daemon "$c" "$d" "$conf" "${sup[@]}" -- "${env[@]}" ||
		{ echo "fail - $c $p $fn $off $a $k no-start" >"$tmp/result.$n"; return; }
	if [ "$p" != start ]; then
		wait_for 10 gone_or "$c" "$d" ready "$d"
		go_steady "$c" "$d"
		[ -n "$stall" ] && [ "$p" = steady ] && stall_begin "$c" "$d" "$stall"
		if [ "$p" = reload ] || [ "$p" = stop ]; then
			nap 0.3
			[ -n "$stall" ] && [ "$p" = reload ] && stall_begin "$c" "$d" "$stall"
			go_reload "$c" "$d"
		fi
		[ "$p" = stop ] && nap 0.3 && : >"$d/phase.stop"
		[ -n "$stall" ] && [ "$p" = stop ] && stall_begin "$c" "$d" "$stall"
	fi
	# A stop's sites (and the keeper's stall) come after the SIGTERM.
	[ "$p" = stop ] || wait_for 5 gone_or "$c" "$d" hit "$d"
	# Faults and signals: let the daemon carry on to its loop first.
	case $a in
	eintr | eagain | error | sig*)
		hit "$d" && wait_for 5 gone_or "$c" "$d" ready "$d"
		[ "$p" = start ] || nap 0.2
		;;
	esac
	local target started
	if [ -n "$hup" ]; then
		target_pid target "$c" "$d"
		kill -HUP "$target" 2>/dev/null
		nap 0.5
	fi
	# SIGTERM to the daemon, or to the process started while the daemon
	# does not exist yet (a detaching parent passes it on).
	local exited_before=0 t0=$EPOCHREALTIME _
	pid_of started "$d/started"
	target_pid target "$c" "$d"
	gone "$c" "$d" && exited_before=1
	if [ "$a" = sigterm ]; then
		[ -s "$d/hit" ] && read -r _ _ _ t0 _ <"$d/hit"
	else
		kill -TERM "$target" 2>/dev/null
	fi
	# A hang is killed after 3 s, so the run ends either way.
	LATE=0
	if ! wait_for 3 gone "$c" "$d"; then
		local pid rest
		while read -r pid rest; do
			[ "$rest" = keeper ] || [ -e "$d/exit.$pid" ] || kill -KILL "$pid" 2>/dev/null
		done <"$d/procs"
		wait_for 2 gone "$c" "$d"
	fi
	# Then the process started (a detaching parent) and the keeper.
	local kp sup_pid
	pid_of kp "$d/keeper" && kill -CONT "$kp" 2>/dev/null
	wait_for 2 exited "$d" "$started"
	pid_of sup_pid "$d/supervisor"
	if ! wait_for 5 eval '! kill -0 '"$sup_pid"' 2>/dev/null'; then
		why="the daemon's processes were still there 5 s after it"
		result=fail
	fi
	stop_helpers "$d"
	wait "$sup_pid" 2>/dev/null
	# Its exit, and when: the daemon's, or (a detaching parent that was
	# still there had to go as soon) the later of the two.
	local dpid ended="" code="" t1="" rc=255 line=""
	target_pid dpid "$c" "$d"
	if [ -s "$d/exit.$dpid" ]; then
		read -r ended code t1 <"$d/exit.$dpid"
		line="$ended $code"
		if [ "$ended" = signal ]; then rc=$((128 + code)); else rc=$code; fi
	fi
	if [ "$dpid" != "$started" ] && [ -n "$t1" ] && [ -s "$d/exit.$started" ]; then
		local pt u1 u2
		read -r _ _ pt <"$d/exit.$started"
		usec "$t1" u1
		usec "$pt" u2
		[ "$u2" -gt "$u1" ] && t1=$pt
	fi
	local stop_us=-1 u0
	if [ -n "$t1" ]; then
		usec "$t0" u0
		usec "$t1" stop_us
		stop_us=$((stop_us - u0))
		[ "$stop_us" -ge 0 ] || stop_us=0
		printf -v stop '%d.%03d' $((stop_us / 1000000)) $((stop_us % 1000000 / 1000))
	fi
	# A fault or block on the log's own writes, a stalled log, or a fault
	# on the PID file's unlink or the hand-over record's own I/O: the
	# summary, the removal or the record cannot be, by construction.
	local log_broken=0 pid_broken=0 record_broken=0
	case $a:$what in
	eintr:*/log | eagain:*/log | error:*/log | block:*pipe:* | block:syslog) log_broken=1 ;;
	eintr:*/pid | eagain:*/pid | error:*/pid) pid_broken=1 ;;
	eintr:*/run/hwrng-quality | eagain:*/run/hwrng-quality | error:*/run/hwrng-quality) record_broken=1 ;;
	esac
	case $fn:$a in fprintf:block | syslog:block | write:block) log_broken=1 ;; esac
	case $stall in stderr | syslog) log_broken=1 ;; esac
	local log=
	[ -s "$d/log" ] && log=$(<"$d/log")
	if ! hit "$d"; then
		result=unreached
	elif [ "$exited_before" = 0 ] && { [ "$stop_us" -lt 0 ] ||
		[ "$stop_us" -gt $((LIMIT_US)) ]; }; then
		result=fail why="not gone within ${LIMIT} s of SIGTERM (${line:-no exit seen})${why:+; $why}"
		# Only late, and the machine stopped running the driver
		# meanwhile: run_case runs it again.
		[ "$stop_us" -ge 0 ] && [ "$stop_us" -le $((3 * LIMIT_US)) ] &&
			[ "$rc" -le 2 ] && [ "$LATE" -gt 250000 ] && : >"$d/late"
	elif [ "$rc" -gt 2 ]; then
		result=fail why="exit status $rc (a signal or a crash)${why:+; $why}"
	elif [ "$log_broken" = 0 ] && [ "$rc" -eq 0 ] && [[ $log != *"summary after"* ]]; then
		result=fail why="exit 0 without its summary${why:+; $why}"
	elif [ "$log_broken" = 0 ] && [ "$rc" -ne 0 ] && [[ $'\n'$log != *$'\n'"rngfeed: "* ]]; then
		result=fail why="exit $rc without a message${why:+; $why}"
	fi
	# Its own PID file (this PID in it): another's, or one it could not
	# lock, it must leave alone; one whose unlink failed here stays.
	local pidf=
	[ -s "$d/pid" ] && read -r pidf <"$d/pid"
	if [ "$pid_broken" = 0 ] && [ -n "$dpid" ] && [ "$pidf" = "$dpid" ]; then
		result=fail why="$why; PID file left"
	fi
	# The hand-over (hwrng): the fixture's rng_quality back, or, when the
	# hand-back could not be done (an attribute that failed or did not
	# answer), its record left for --restore-hwrng-quality (ExecStopPost=)
	# naming the value to put back.
	local left=() q=
	shopt -s nullglob dotglob
	left=("$d"/run/*)
	shopt -u nullglob dotglob
	[ "$record_broken" = 1 ] && left=()
	[ -s "$d/sysfs/rng_quality" ] && read -r q <"$d/sysfs/rng_quality"
	if [ "$c" = hwrng ] && [ "$q" != "$HWRNG_QUALITY" ]; then
		local rec=
		[ -s "$d/run/hwrng-quality" ] && rec=$(<"$d/run/hwrng-quality")
		if [[ $'\n'$rec$'\n' == *$'\n'"quality=$HWRNG_QUALITY"$'\n'* ]]; then
			why="$why; rng_quality left at '$q', its record kept for --restore-hwrng-quality"
			left=()
		else
			result=fail why="$why; the fixture's rng_quality left at '$q', not put back to $HWRNG_QUALITY and no record of it"
		fi
	fi
	if [ "${#left[@]}" -gt 0 ]; then
		result=fail why="$why; left in RUNTIME_DIRECTORY: ${left[*]##*/}"
	fi
	if [ -s "$d/credit" ]; then
		local rate=$CREDIT
		[ "$c" = hwrng ] && rate=1024
		if [ "$c" = stdout ] || [ "$c" = test ]; then
			result=fail why="$why; $c credited the kernel"
		elif ! awk -v k="$rate" '{ s += $1; if (s > $2 * 8 * k / 1024) exit 1 }' "$d/credit"; then
			result=fail why="$why; credit beyond the tested input read"
		fi
	fi
	[ "$result" = unreached ] && why="site not reached in this run"
	echo "$result $stop $c $p $fn $off $a $k ${why#; }" >"$tmp/result.$n"
}

n=0
running=0
while read -r c p fn off a k _ what; do
	n=$((n + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	# Its stderr: the shell's notes about the processes it killed.
	run_case "$n" "$c" "$p" "$fn" "$off" "$a" "$k" "$what" 2>>"$tmp/driver.err" &
	running=$((running + 1))
done <"$tmp/cases"
wait
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# ---- 3. the report ---------------------------------------------------------------
cat "$tmp"/result.* 2>/dev/null | sort -k3,3 -k4,4 -k5,5 -k6,6 -k7,7 >"$tmp/results"

# The blocked sites: "RESULT FUNC SITE KIND THREAD CONFIG PHASE ACTION",
# one per case and site: a block case's site (its kind from what it
# waits on), each site that met a stall case's peer (the stall's kind).
for f in "$tmp"/result.*; do
	nn=${f##*.}
	read -r res _ c p fn off a k _ <"$f"
	kind=
	[ "$res" = unreached ] && continue
	if [ "$a" = block ] && [ -s "$tmp/case.$nn/hit" ]; then
		what=$(awk -v c="$c" -v fn="$fn" -v off="$off" '$1 == c && $3 == fn && $4 == off { print $7; exit }' "$tmp/sites.all")
		kind=$(awk -v fn="$fn" -v k="$k" -v w="$what" -v c="$c" 'BEGIN {
			if (fn == "poll") print "poll"
			else if (fn == "syslog") print "syslog"
			else if (k == "sysfs") print "sysfs"
			else if (fn == "getrandom") print "getrandom"
			else if (w ~ /eventfd/) print "eventfd"
			else if (fn == "sendto") print "notify"
			else if (fn ~ /^(fprintf|fflush)$/) print "stderr"
			else if (w ~ /^pipe:/) print (c == "stdout" ? "stdout" : "pipe")
			else if (w ~ /^socket:|MSG_DONTWAIT/ || fn ~ /^(accept|recv|send)/) print (c == "detached" ? "keeper" : "socket")
			else if (fn ~ /^open/) print "fifo"
			else print k }')
		echo "$res $fn $off $kind main $c $p $a"
	fi
	# A site that met the fd a block stalled: the block's kind.
	[ -s "$tmp/case.$nn/met" ] && awk -v r="$res" -v k="${kind:-}" -v c="$c" -v p="$p" -v a="$a" \
		'{ print r, $1, $2, ($3 == "stalled-fd" && k != "" ? k : $3), $4, c, p, a }' "$tmp/case.$nn/met"
done | sort -u >"$tmp/blocked"

# Where each site is (those of cases that did not pass, and the blocked
# ones): "file.c:LINE (function) from file.c:LINE (function)", at each
# return address the innermost inlined frame in a .c file (not a libc
# header's fortify wrapper); one addr2line for them all.
declare -A where=()
mapfile -t offs < <({ awk '$1 != "pass" { print $6 }' "$tmp/results"; awk '{ print $3 }' "$tmp/blocked"; } |
	awk '/^0x/ { split($1, a, "/"); print a[1]; if (a[2] != "0x0") print a[2] }' | sort -u)
if [ "${#offs[@]}" -gt 0 ]; then
	i=0
	while IFS= read -r line; do
		where[${offs[i]}]=$line
		i=$((i + 1))
	done < <(for o in "${offs[@]}"; do printf '0x%x\n' $((o - 1)); done |
		addr2line -a -f -s -i -e "$RNGFEED" |
		awk '/^0x/ { if (NR > 1) print out; out = ""; next }
			{ fn = $0; getline loc; sub(/ \(discriminator [0-9]+\)/, "", loc)
			  if (out == "" && loc ~ /\.c:/) out = loc " (" fn ")" }
			END { print out }')
fi
where_is() { # VAR SITE
	local -n where_out=$1
	where_out=-
	[[ $2 == 0x* ]] || return 0
	where_out=${where[${2%/*}]:-?}
	[ "${2#*/}" = 0x0 ] || where_out="$where_out from ${where[${2#*/}]:-?}"
}

at=-
while read -r res stop c p fn off a k why; do
	[ "$res" = pass ] && continue
	where_is at "$off"
	printf '%s: %-8s %-6s %-14s %s at %s %s: %s (stop %s s)\n' \
		"${res^^}" "$c" "$p" "$a" "$fn" "$off" "$at" "$why" "$stop"
done <"$tmp/results"
for f in "$tmp"/result.*; do
	read -r res _ c p fn off a _ <"$f"
	[ "$res" = fail ] || continue
	say "--- the log of case ${f##*.} ($c $p $fn $off $a), last lines:"
	tail -n 4 "$tmp/case.${f##*.}/log" | sed 's/^/    | /'
done 2>/dev/null | head -n 80

# Each distinct blocked site once: where, its kind and thread, the cases.
say "blocked sites (kind, thread: configuration phase case ..., each passed unless said):"
awk '{ key = $2 " " $3
	if (!(key in kind)) { order[++n] = key; kind[key] = $4; thr[key] = $5 }
	c = $6 " " $7 " " $8 ($1 != "pass" ? " (" $1 ")" : "")
	if (index(" " cases[key] ",", " " c ",") == 0) cases[key] = cases[key] (cases[key] == "" ? "" : ", ") c }
	END { for (i = 1; i <= n; i++) print order[i], kind[order[i]], thr[order[i]], cases[order[i]] }' "$tmp/blocked" |
	sort -k3,3 -k1,1 | while read -r fn off kind thr cases; do
		where_is at "$off"
		say "  $fn at $at [$kind, $thr: $cases]"
	done
blocked=$(awk '{ print $2, $3 }' "$tmp/blocked" | sort -u | wc -l)
blocked_ok=$(awk '{ key = $2 " " $3; all[key] = 1; if ($1 != "pass") bad[key] = 1 }
	END { n = 0; for (k in all) if (!(k in bad)) n++; print n }' "$tmp/blocked")
blocked_main=$(awk '$5 == "main" { print $2, $3 }' "$tmp/blocked" | sort -u | wc -l)
blocked_other=$(awk '$5 != "main" { print $2, $3 }' "$tmp/blocked" | sort -u | wc -l)
# Per kind: each distinct site under the first kind it was blocked as.
kinds=$(awk '{ key = $2 " " $3; if (!(key in kind)) { kind[key] = $4; n[$4]++ } }
	END { for (k in n) printf "%s %d\n", k, n[k] }' "$tmp/blocked" | sort | awk '{ printf "%s%s %d", (NR > 1 ? ", " : ""), $1, $2 }')
slowest=$(awk '$1 != "unreached" && $2 != "-" { if ($2 > m) m = $2 } END { printf "%.3f", m }' "$tmp/results")
passed=$(grep -c '^pass ' "$tmp/results")
failed=$(grep -c '^fail ' "$tmp/results")
unreached=$(grep -c '^unreached ' "$tmp/results")
reruns=0
[ -e "$tmp/reruns" ] && reruns=$(wc -l <"$tmp/reruns")
say "$ncases cases in $elapsed s with the recording ($JOBS at a time); slowest stop ${slowest} s; $reruns run again after a stall of the machine"
say "liveness: $distinct distinct call sites of the daemon's main thread reached in all"
say "liveness: $blocked distinct sites blocked ($blocked_main in the main thread, $blocked_other in others; ${kinds:-none}), $blocked_ok stopped within 1 s"
say "liveness: $passed passed, $failed failed, $unreached not reached"
[ "$failed" -eq 0 ] && [ "$blocked" -gt 0 ]
