#!/bin/bash
# Section 5, "Steady state": what each daemon costs in a server's normal
# life, long after the kernel CRNG is ready.  Each daemon is started in its
# default foreground configuration, left to settle, then measured over a
# window of STEADY_SECONDS (default 60) seconds, then stopped -- all by the
# PID this script started (never by name; a trap stops it on exit):
#
#   CPU       utime + stime of the whole process (every thread) from
#             /proc/PID/stat, window end minus window start (resolution one
#             clock tick, 1/CLK_TCK s)
#   wake-ups  voluntary context switches summed over every thread (a thread
#             that sleeps and is woken again counts one), end minus start
#   RSS       VmHWM, the peak resident set since the process started (the
#             start-up peak included), read at the end of the window
#   memory    Private_Dirty and Pss from /proc/PID/smaps_rollup at the end
#             of the window: the memory that is the daemon's alone (its
#             heap, stacks, locked secure memory, the shared libraries'
#             relocated pages), and its proportional share of everything
#             resident, shared library pages included
#
# The daemons run one after the other, never together: two feeders would
# change each other's behaviour (and the other helpers' CPU load is noise
# enough on a small machine).  Full mode: rngfeed, rngd (rng-tools5),
# jitterentropy-rngd and haveged, about (settle + window + 1) s each, i.e.
# about 4.5 min with the defaults.  BENCH_SMOKE=1: rngfeed only, a 1 s
# settle and a 3 s window (about 5 s in all).
#
# rngfeed tops the kernel up every 60 s (--interval) once the CRNG is ready,
# so a 60 s window normally holds one top-up: that is its steady state, and
# the "fed in the window" row says what it did.  To know that, rngfeed is
# sent SIGUSR1 (log statistics) just before the window opens and just after
# it closes; both signals fall outside the window.
#
# Environment: STEADY_SECONDS (window, default 60; 3 in smoke mode),
# STEADY_SETTLE (seconds between start and window, default 5; 1 in smoke
# mode), and lib.sh's RNGFEED, BENCH_SMOKE, BENCH_WORK.
set -uo pipefail
BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

SECTION=5
if [ -n "${BENCH_SMOKE:-}" ]; then
	WINDOW=${STEADY_SECONDS:-3}
	SETTLE=${STEADY_SETTLE:-1}
else
	WINDOW=${STEADY_SECONDS:-60}
	SETTLE=${STEADY_SETTLE:-5}
fi
for v in WINDOW SETTLE; do
	case ${!v} in
	'' | *[!0-9]*) note "steady: $v must be a whole number of seconds"; exit 2 ;;
	esac
done
[ "$WINDOW" -gt 0 ] || { note "steady: the window must be at least 1 s"; exit 2; }
# SIGUSR1 goes to rngfeed this long before the window opens.
if [ "$SETTLE" -ge 2 ]; then PRE=1; else PRE=0.5; fi

if [ "$(id -u)" != 0 ]; then
	note "steady: needs root (RNDADDENTROPY, /dev/hwrng, starting peers)"
	exit 2
fi
if [ ! -x "$RNGFEED" ]; then
	note "steady: $RNGFEED is not built (make rngfeed)"
	exit 1
fi

# ---------------------------------------------------------------- one daemon

CUR_PID='' NAP_PID=''
stop_current() {
	local pid=$CUR_PID i
	[ -z "$NAP_PID" ] || kill "$NAP_PID" 2>/dev/null
	[ -n "$pid" ] || return 0
	CUR_PID=
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		note "steady: PID $pid ignored SIGTERM for 3 s; SIGKILL"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	return 0
}
trap '[ "$BASHPID" != $$ ] || stop_current' EXIT
trap '[ "$BASHPID" != $$ ] || stop_current; exit 130' INT
trap '[ "$BASHPID" != $$ ] || stop_current; exit 143' TERM

# sleep, but let a signal's trap run at once (bash defers it until a
# foreground command ends).
nap() {
	sleep "$1" &
	NAP_PID=$!
	wait "$NAP_PID"
	NAP_PID=
}

# The process still is the one we started (PID not reused, not exited).
is_ours() { # pid binary
	[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ]
}

# Nanoseconds on CPU (the scheduler's sum_exec_runtime) summed over the
# live threads of PID: finer than the clock ticks of pid_cpu_seconds.
pid_oncpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# A field of /proc/PID/status, in KiB.
pid_status_kib() { # pid field
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

nthreads() {
	local t=("/proc/$1/task/"*)
	echo "${#t[@]}"
}

# The last "fed N bytes crediting M bits" of rngfeed's log: "N M".
rngfeed_fed() {
	sed -n 's/^rngfeed: *fed \([0-9]*\) bytes crediting \([0-9]*\) bits.*/\1 \2/p' "$1" | tail -n 1
}

# still_ours PID BIN NAME LOG PHASE: true while the daemon started here
# runs; otherwise reaps it, sets M_STATE to why, shows its output, false.
still_ours() {
	is_ours "$1" "$2" && return 0
	wait "$1" 2>/dev/null
	M_STATE="exited during the $5 (status $?)"
	CUR_PID=
	note "steady: $3: $M_STATE; its output:"; sed 's/^/    /' "$4" >&2
	return 1
}

# measure NAME COMMAND...: sets M_STATE ("ok" or why not), M_CPU (s),
# M_VOL (count), M_RSS (KiB), M_ANON and M_FILE (KiB resident at the end),
# M_MS (ms on CPU by schedstat), M_SECS (the window as measured), M_FED
# ("bytes bits" or "", rngfeed only).
measure() {
	local name=$1 bin pid log t0 t1 cpu0 cpu1 vol0 vol1 thr0 thr1 fed0 fed1 ns0 ns1
	shift
	M_STATE='' M_CPU='' M_VOL='' M_RSS='' M_FED='' M_SECS='' M_ANON='' M_FILE='' M_MS=''
	M_PDIRTY='' M_PSS=''
	bin=$(command -v "$1") || { M_STATE="not installed"; return; }
	bin=$(readlink -f "$bin")
	if pgrep -x "$(basename "$bin" | cut -c1-15)" >/dev/null; then
		note "steady: another $name is running (PIDs $(pgrep -d ' ' -x "$(basename "$bin" | cut -c1-15)" 2>/dev/null || true)); measuring only the one started here"
	fi
	log=$BENCH_WORK/steady-$name.log
	"$@" >"$log" 2>&1 &
	pid=$!
	CUR_PID=$pid
	note "steady: $name started (PID $pid: $*); settle ${SETTLE} s, window ${WINDOW} s"
	if [ "$name" = rngfeed ]; then
		nap "$(awk -v s="$SETTLE" -v p="$PRE" 'BEGIN { print s - p }')"
		is_ours "$pid" "$bin" && kill -USR1 "$pid"
		nap "$PRE"
	else
		nap "$SETTLE"
	fi
	still_ours "$pid" "$bin" "$name" "$log" settle || return
	[ "$name" = rngfeed ] && fed0=$(rngfeed_fed "$log")
	thr0=$(nthreads "$pid")
	# The window as measured runs from the last start sample to the first
	# end sample (a little short of the true one: rates err high).
	cpu0=$(pid_cpu_seconds "$pid")
	vol0=$(pid_voluntary_switches "$pid")
	ns0=$(pid_oncpu_ns "$pid")
	t0=$(date +%s.%N)
	nap "$WINDOW"
	still_ours "$pid" "$bin" "$name" "$log" window || return
	t1=$(date +%s.%N)
	cpu1=$(pid_cpu_seconds "$pid")
	vol1=$(pid_voluntary_switches "$pid")
	ns1=$(pid_oncpu_ns "$pid")
	M_RSS=$(pid_peak_rss_kib "$pid")
	M_ANON=$(pid_status_kib "$pid" RssAnon)
	M_FILE=$(pid_status_kib "$pid" RssFile)
	M_PDIRTY=$(awk '$1 == "Private_Dirty:" { print $2 }' "/proc/$pid/smaps_rollup")
	M_PSS=$(awk '$1 == "Pss:" { print $2 }' "/proc/$pid/smaps_rollup")
	M_MS=$(awk -v a="$ns0" -v b="$ns1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
	thr1=$(nthreads "$pid")
	M_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	note "steady: $name: window $M_SECS s;" \
		"threads $thr0 -> $thr1; VmRSS now $(pid_status_kib "$pid" VmRSS) KiB" \
		"($M_ANON anonymous, $M_FILE file-backed, VmLck $(pid_status_kib "$pid" VmLck));" \
		"PSS $(awk '$1 == "Pss:" { print $2 }' "/proc/$pid/smaps_rollup" 2>/dev/null) KiB;" \
		"voluntary $vol0 -> $vol1; CPU $cpu0 -> $cpu1 s; on CPU $M_MS ms"
	[ "$thr0" = "$thr1" ] ||
		note "steady: $name: thread count changed, switches of exited threads are lost"
	if [ "$name" = rngfeed ]; then
		kill -USR1 "$pid"
		sleep 0.3
		fed1=$(rngfeed_fed "$log")
		if [ -n "$fed0" ] && [ -n "$fed1" ]; then
			# shellcheck disable=SC2086 # "bytes bits" split on purpose
			M_FED=$(set -- $fed0 $fed1; echo "$(($3 - $1)) $(($4 - $2))")
		fi
	fi
	M_CPU=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.2f", b - a }')
	M_VOL=$((vol1 - vol0))
	M_STATE=ok
	stop_current
}

# ------------------------------------------------------------------ the runs

note "steady: CPU figures have a resolution of 1/$(getconf CLK_TCK) s"
# A binary just linked sits in the page cache as dirty pages until
# writeback, and dirty file pages mapped by one process count as its
# Private_Dirty (160 KiB of rngfeed's own text and data after a make):
# write it out first.
sync "$RNGFEED" 2>/dev/null || sync
measure rngfeed "$RNGFEED" -f -c /dev/null
if [ "$M_STATE" != ok ]; then
	row "$SECTION" "rngfeed steady state" "$M_STATE" "—" "—" ""
	exit 1
fi
R_CPU=$M_CPU R_VOL=$M_VOL R_RSS=$M_RSS R_FED=$M_FED R_SECS=$M_SECS R_ANON=$M_ANON R_FILE=$M_FILE R_MS=$M_MS
R_PDIRTY=$M_PDIRTY R_PSS=$M_PSS

PEERS=(rngd jitterentropy-rngd haveged)
declare -A P_STATE P_CPU P_VOL P_RSS P_SECS P_ANON P_FILE P_MS P_PDIRTY P_PSS
if [ -z "${BENCH_SMOKE:-}" ]; then
	for p in "${PEERS[@]}"; do
		case $p in
		# Their own PID files, so that a system copy's is not touched.
		rngd) measure rngd rngd -f -p "$BENCH_WORK/steady-rngd.pid" ;;
		# "-v: verbose logging implies running in foreground" (--help);
		# it has no other foreground switch.
		jitterentropy-rngd) measure jitterentropy-rngd jitterentropy-rngd -v ;;
		haveged) measure haveged haveged -F -p "$BENCH_WORK/steady-haveged.pid" ;;
		esac
		P_STATE[$p]=$M_STATE P_CPU[$p]=$M_CPU P_VOL[$p]=$M_VOL P_RSS[$p]=$M_RSS P_SECS[$p]=$M_SECS
		P_ANON[$p]=$M_ANON P_FILE[$p]=$M_FILE P_MS[$p]=$M_MS
		P_PDIRTY[$p]=$M_PDIRTY P_PSS[$p]=$M_PSS
	done
fi

# ------------------------------------------------------------------ the rows

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
anon_file() { awk -v a="$1" -v f="$2" 'BEGIN { printf "%.2f + %.2f MiB", a / 1024, f / 1024 }'; }

# peer_list FORMATTER: "rngd X · jitterentropy-rngd Y · haveged Z"
peer_list() {
	local p out='' v
	if [ -n "${BENCH_SMOKE:-}" ]; then
		echo "skipped (smoke)"
		return
	fi
	for p in "${PEERS[@]}"; do
		if [ "${P_STATE[$p]}" = ok ]; then v=$("$1" "$p"); else v=${P_STATE[$p]}; fi
		out+="${out:+ · }$p $v"
	done
	echo "$out"
}
# shellcheck disable=SC2317 # called through peer_list
fmt_cpu() { echo "${P_CPU[$1]} s (${P_MS[$1]} ms)"; }
# shellcheck disable=SC2317
fmt_vol() { awk -v n="${P_VOL[$1]}" -v w="${P_SECS[$1]}" 'BEGIN { printf "%d (%.2f/s)", n, n / w }'; }
# shellcheck disable=SC2317
fmt_rss() { mib "${P_RSS[$1]}"; }
# shellcheck disable=SC2317
fmt_split() { anon_file "${P_ANON[$1]}" "${P_FILE[$1]}"; }
# shellcheck disable=SC2317
fmt_pdirty() { echo "${P_PDIRTY[$1]} KiB"; }
# shellcheck disable=SC2317
fmt_pss() { echo "${P_PSS[$1]} KiB"; }
vs_rngd() { # ours field
	local ref
	if [ -n "${BENCH_SMOKE:-}" ] || [ "${P_STATE[rngd]}" != ok ]; then
		echo "—"
		return
	fi
	case $2 in
	cpu) ref=${P_MS[rngd]} ;; vol) ref=${P_VOL[rngd]} ;; rss) ref=${P_RSS[rngd]} ;;
	pdirty) ref=${P_PDIRTY[rngd]} ;; pss) ref=${P_PSS[rngd]} ;;
	esac
	ratio "$1" "$ref"
}
met() { if [ "$1" = 1 ]; then echo met; else echo MISSED; fi; }

win="over $WINDOW s after a $SETTLE s settle"
# The share of a core from the finer of the two figures; the target is
# judged on the larger, so the coarse ticks cannot flatter it.
pct=$(awk -v m="$R_MS" -v w="$R_SECS" 'BEGIN { printf "%.3f", 100 * m / 1000 / w }')
worst=$(awk -v c="$R_CPU" -v m="$R_MS" 'BEGIN { print (m / 1000 > c ? m / 1000 : c) }')
row "$SECTION" "rngfeed CPU time (utime+stime, all threads) $win" \
	"$R_CPU s ($R_MS ms on CPU by schedstat: $pct % of a core)" "$(peer_list fmt_cpu)" "$(vs_rngd "$R_MS" cpu)" \
	"< 0.1 % of a core: $(met "$(awk -v c="$worst" -v w="$R_SECS" 'BEGIN { print (c / w < 0.001) }')")"
row "$SECTION" "rngfeed wake-ups (voluntary context switches, all threads) $win" \
	"$(awk -v n="$R_VOL" -v w="$R_SECS" 'BEGIN { printf "%d (%.2f/s)", n, n / w }')" \
	"$(peer_list fmt_vol)" "$(vs_rngd "$R_VOL" vol)" \
	"≤ 1 wake-up/s: $(met "$(awk -v n="$R_VOL" -v w="$R_SECS" 'BEGIN { print (n / w <= 1) }')")"
row "$SECTION" "rngfeed peak RSS (VmHWM, start-up included)" \
	"$(mib "$R_RSS") ($R_RSS KiB)" "$(peer_list fmt_rss)" "$(vs_rngd "$R_RSS" rss)" \
	"≤ 2 MiB: $(met "$([ "$R_RSS" -le 2048 ] && echo 1)")"
row "$SECTION" "rngfeed resident at the window's end: anonymous + file-backed (shared libraries' pages, shared with other processes)" \
	"$(anon_file "$R_ANON" "$R_FILE")" "$(peer_list fmt_split)" "—" ""
if [ -n "${BENCH_SMOKE:-}" ] || [ "${P_STATE[rngd]:-}" != ok ]; then
	pd_target=""
else
	pd_target="≤ rngd's: $(met "$([ "$R_PDIRTY" -le "${P_PDIRTY[rngd]}" ] && echo 1)")"
fi
row "$SECTION" "rngfeed Private_Dirty at the window's end (smaps_rollup: its own pages: heap, stacks, locked secure memory, libraries' relocations)" \
	"$R_PDIRTY KiB" "$(peer_list fmt_pdirty)" "$(vs_rngd "$R_PDIRTY" pdirty)" "$pd_target"
row "$SECTION" "rngfeed PSS at the window's end (smaps_rollup: its share of every resident page, shared libraries' included)" \
	"$R_PSS KiB" "$(peer_list fmt_pss)" "$(vs_rngd "$R_PSS" pss)" "reported"
if [ -n "$R_FED" ]; then
	# shellcheck disable=SC2086 # "bytes bits" split on purpose
	set -- $R_FED
	fed="$1 B fed, $2 bits credited"
	[ "$1" = 0 ] && fed="nothing fed (no top-up due in the window)"
else
	fed="unknown (no \"fed\" line in the SIGUSR1 log)"
fi
row "$SECTION" "rngfeed fed to the kernel in the window (top-up every 60 s)" "$fed" "—" "—" ""
exit 0
